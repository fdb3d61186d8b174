package application

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxCharmFileSize is the largest file put in a charm archive; bigger ones are left out.
const maxCharmFileSize = 10 << 20

// zipCharm archives the charm directory dir in memory, as UploadCharm wants it. It leaves out
// .git directories, the top-level build/ directory, files over 10 MiB (listed in skipped) and
// anything that is not a regular file or directory. Symbolic links to files are archived as
// the file they point to, keeping its mode (hooks are often links to one script).
func zipCharm(dir string) (archive []byte, skipped []string, err error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || rel == "build" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := os.Stat(path) // follows links
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		if info.Size() > maxCharmFileSize {
			skipped = append(skipped, rel)
			return nil
		}
		return addFile(zw, path, rel, info)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("archiving charm %q: %w", dir, err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, fmt.Errorf("archiving charm %q: %w", dir, err)
	}
	return buf.Bytes(), skipped, nil
}

func addFile(zw *zip.Writer, path, name string, info fs.FileInfo) error {
	hdr, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	hdr.Name = name
	hdr.Method = zip.Deflate
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
