package state

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/jujuclone/juju/api/apierr"
	"github.com/jujuclone/juju/api/storepb"
	"github.com/jujuclone/juju/core/charm"
	"github.com/jujuclone/juju/core/life"
	"github.com/jujuclone/juju/core/names"
)

// Charm resources (metadata "resources:", type file): juju deploy --resource, juju refresh
// --resource, juju attach-resource, juju resources and the resource-get hook tool.
//
// Content is stored once per application and content (sha384), in chunks of one etcd request
// each like charm archives (ResourceBlob); each revision, pending upload and unit record is a
// ResourceRevision. Every document of an application's resources lives under its own
// prefixes, so that whichever transaction removes the application (deleteApplication) removes
// them too, with range deletes that do not grow with what they delete; removing a unit removes
// its records likewise. A blob counts the current and pending documents that name it and goes,
// chunks included, in the transaction that drops the last of them.

// resourceBlobPrefix holds the chunks, outside the model's prefix so that model snapshots
// never carry them.
const resourceBlobPrefix = "/juju/resourceblobs/"

// PendingResourceTTL is how long an upload kept aside for a deploy or refresh waits to be
// used; older ones are removed, with their content, at the next upload to the model.
const PendingResourceTTL = time.Hour

// OriginUpload is the origin of every revision here: there is no charm store.
const OriginUpload = "upload"

func modelResourcesPrefix(uuid string) string { return ModelPrefix(uuid) + "resources/" }
func appResourcesPrefix(uuid, app string) string {
	return modelResourcesPrefix(uuid) + app + "/"
}
func currentResourceKey(uuid, app, name string) string {
	return appResourcesPrefix(uuid, app) + "current/" + name
}
func resourceBlobKey(uuid, app, sum string) string {
	return appResourcesPrefix(uuid, app) + "blobs/" + sum
}
func unitResourcesPrefix(uuid, unit string) string {
	app, num, _ := strings.Cut(unit, "/")
	return appResourcesPrefix(uuid, app) + "units/" + num + "/"
}
func unitResourceKey(uuid, unit, name string) string { return unitResourcesPrefix(uuid, unit) + name }
func pendingResourcesPrefix(uuid, app string) string {
	return ModelPrefix(uuid) + "pendingresources/" + app + "/"
}
func pendingResourceKey(uuid, app, id string) string { return pendingResourcesPrefix(uuid, app) + id }
func appResourceChunksPrefix(uuid, app string) string {
	return resourceBlobPrefix + uuid + "/" + app + "/"
}
func resourceChunksPrefix(uuid, app, sum, upload string) string {
	return appResourceChunksPrefix(uuid, app) + sum + "/" + upload + "/"
}

// deleteRange adds the deletion of every key under prefix: one operation, however many keys.
func (w *writes) deleteRange(prefix string) {
	w.add(prefix, clientv3.OpDelete(prefix, clientv3.WithPrefix()))
}

// deleteApplicationResources removes every document of an application's resources, with the
// application (deleteApplication).
func (w *writes) deleteApplicationResources(uuid, app string) {
	w.deleteRange(appResourcesPrefix(uuid, app))
	w.deleteRange(pendingResourcesPrefix(uuid, app))
	w.deleteRange(appResourceChunksPrefix(uuid, app))
}

// deleteUnitResources removes what a unit fetched (the records juju resources <unit> shows),
// with the unit.
func (w *writes) deleteUnitResources(uuid, unit string) {
	w.deleteRange(unitResourcesPrefix(uuid, unit))
}

// pendingIDRe is what newResourceID makes; any other id names no upload.
var pendingIDRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

func newResourceID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating resource id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Resource is one resource of an application as juju resources shows it: what the charm
// declares and the revision stored, nil when none was uploaded.
type Resource struct {
	Meta charm.Resource
	Rev  *storepb.ResourceRevision
}

// UnitResources is what one unit fetched (resource-get), by resource name order.
type UnitResources struct {
	Unit      string
	Resources []Resource
}

// ApplicationResources are an application's resources: every file resource its charm
// declares, uploaded or not, sorted by name; and per unit (all of them, naturally sorted, or
// the one asked for) what it has fetched.
type ApplicationResources struct {
	Application string
	Resources   []Resource
	Units       []UnitResources
}

// UploadResourceArgs is one upload.
type UploadResourceArgs struct {
	Application string
	Name        string
	// Filename is the uploaded file's name; only its base name is kept.
	Filename string
	Content  []byte
	Username string
	// Pending keeps the upload aside for a deploy or refresh naming its id; CharmURL is then
	// the uploaded charm that declares the resource (the application need not exist).
	// Otherwise the upload is the application's next revision at once (attach-resource).
	Pending  bool
	CharmURL string
}

// UploadedResource is the outcome of an upload: the revision stored (for a pending upload,
// the revision it would be now) and, for a pending upload, its id.
type UploadedResource struct {
	PendingID string
	Resource  Resource
}

// errBlobGone: the blob an upload found stored went before the upload's transaction; the
// upload stores the content itself.
var errBlobGone = errors.New("resource content removed meanwhile")

// UploadResource stores a resource's content, checked against the charm that declares it:
// kept aside (pending) for a deploy or refresh, or as the application's next revision, which
// also grows the application's charm modified version so that its units run upgrade-charm
// (attach-resource). Content the application already has is not stored again. Refused
// uploads store nothing: content larger than charm.MaxResourceSize, a resource the charm does
// not declare or that is not a file, an application that is not alive.
func (s *State) UploadResource(ctx context.Context, uuid string, args UploadResourceArgs) (*UploadedResource, error) {
	what := fmt.Sprintf("cannot upload resource %q", args.Name)
	if !names.IsValidApplication(args.Application) {
		return nil, apierr.Errorf(apierr.NotValid, "application name %q not valid", args.Application)
	}
	if len(args.Content) > charm.MaxResourceSize {
		return nil, apierr.Errorf(apierr.NotValid, "resource %q of %d bytes is larger than the %d bytes (%s) a resource may hold",
			args.Name, len(args.Content), charm.MaxResourceSize, mib(charm.MaxResourceSize))
	}
	charmURL := args.CharmURL
	if args.Pending {
		if charmURL == "" {
			return nil, apierr.Errorf(apierr.NotValid, "a pending upload of resource %q needs the charm url", args.Name)
		}
	} else {
		app, err := s.Application(ctx, uuid, args.Application)
		if err != nil {
			return nil, err
		}
		charmURL = app.CharmUrl
	}
	meta, err := s.resourceMeta(ctx, uuid, charmURL, args.Name)
	if err != nil {
		return nil, err
	}
	s.expirePendingResources(ctx, uuid)

	sum := charm.ResourceFingerprint(args.Content)
	rev := &storepb.ResourceRevision{
		Name: args.Name, Fingerprint: sum, Size: int64(len(args.Content)), Origin: OriginUpload,
		Username: args.Username, Timestamp: s.now().UnixNano(),
	}
	if args.Filename != "" {
		rev.Filename = path.Base(args.Filename)
	}
	out := &UploadedResource{Resource: Resource{Meta: meta, Rev: rev}}
	if args.Pending {
		rev.CharmUrl = charmURL
		if out.PendingID, err = newResourceID(); err != nil {
			return nil, err
		}
	}
	// build is the transaction; created: it stores the content with the chunks of upload.
	build := func(ctx context.Context, r *reader, upload string, chunks int) (w *writes, created bool, err error) {
		if _, err := r.model(ctx, uuid); err != nil {
			return nil, false, err
		}
		w = &writes{}
		refs := newBlobRefs()
		blob, err := r.resourceBlob(ctx, uuid, args.Application, sum, refs)
		if err != nil {
			return nil, false, err
		}
		if blob == nil {
			if upload == "" {
				return nil, false, errBlobGone
			}
			refs.create(sum, &storepb.ResourceBlob{Size: rev.Size, Chunks: int32(chunks), Upload: upload})
			created = true
		}
		refs.add(sum, 1)
		if args.Pending {
			// Informational: the revision it would be if used now.
			cur, err := r.currentResource(ctx, uuid, args.Application, args.Name)
			if err != nil {
				return nil, false, err
			}
			rev.Revision = cur.GetRevision() + 1
			w.put(pendingResourceKey(uuid, args.Application, out.PendingID), rev)
			return w, created, refs.write(w, uuid, args.Application)
		}
		app, err := r.application(ctx, uuid, args.Application)
		if err != nil {
			return nil, false, err
		}
		if app.Life != string(life.Alive) {
			return nil, false, apierr.Errorf(apierr.NotAlive, "application %q is not alive", args.Application)
		}
		if app.CharmUrl != charmURL {
			// Refreshed since the check: check against the new charm.
			if _, err := s.resourceMeta(ctx, uuid, app.CharmUrl, args.Name); err != nil {
				return nil, false, err
			}
		}
		cur, err := r.currentResource(ctx, uuid, args.Application, args.Name)
		if err != nil {
			return nil, false, err
		}
		if cur != nil {
			if _, err := r.resourceBlob(ctx, uuid, args.Application, cur.Fingerprint, refs); err != nil {
				return nil, false, err
			}
			refs.add(cur.Fingerprint, -1)
		}
		rev.Revision = cur.GetRevision() + 1
		w.put(currentResourceKey(uuid, args.Application, args.Name), rev)
		// The units run upgrade-charm, where charms fetch their resources again.
		app.CharmModifiedVersion++
		w.put(applicationKey(uuid, app.Name), app)
		return w, created, refs.write(w, uuid, args.Application)
	}

	// Stored content is written once per application: an upload stores chunks only when the
	// blob is missing, and keeps them only when its transaction records them.
	for attempt := 0; ; attempt++ {
		upload, chunks := "", 0
		if exists, err := s.hasResourceBlob(ctx, uuid, args.Application, sum); err != nil {
			return nil, err
		} else if !exists || attempt > 0 {
			if upload, chunks, err = s.storeResourceChunks(ctx, uuid, args.Application, sum, args.Content); err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		used := false
		err := s.run(ctx, what, func(ctx context.Context, r *reader) (*writes, error) {
			w, created, err := build(ctx, r, upload, chunks)
			used = created // the chunks are kept only when the transaction that commits stores them
			return w, err
		})
		if upload != "" && (err != nil || !used) {
			s.deleteChunks(resourceChunksPrefix(uuid, args.Application, sum, upload))
		}
		if errors.Is(err, errBlobGone) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// resourceMeta is the file resource name as the charm at url declares it.
func (s *State) resourceMeta(ctx context.Context, uuid, url, name string) (charm.Resource, error) {
	doc, err := s.Charm(ctx, uuid, url)
	if err != nil {
		return charm.Resource{}, err
	}
	meta, err := CharmMeta(doc)
	if err != nil {
		return charm.Resource{}, err
	}
	return declaredResource(meta, name)
}

// declaredResource is the file resource name of a charm's metadata.
func declaredResource(meta *charm.Meta, name string) (charm.Resource, error) {
	res, ok := meta.Resources[name]
	if !ok {
		return charm.Resource{}, apierr.Errorf(apierr.NotFound, "charm %q has no resource %q", meta.Name, name)
	}
	res.Name = name
	if res.Type != charm.ResourceFile {
		return charm.Resource{}, apierr.Errorf(apierr.NotSupported,
			"resource %q is of type %s: machine models take file resources only", name, res.Type)
	}
	return res, nil
}

func (r *reader) currentResource(ctx context.Context, uuid, app, name string) (*storepb.ResourceRevision, error) {
	rev := &storepb.ResourceRevision{}
	found, err := r.get(ctx, currentResourceKey(uuid, app, name), rev)
	if err != nil || !found {
		return nil, err
	}
	return rev, nil
}

// blobRefs collects, within one transaction, the blobs read (or created) and how many
// documents naming each it adds (or removes).
type blobRefs struct {
	blobs   map[string]*storepb.ResourceBlob // nil value: not stored
	created map[string]bool
	delta   map[string]int32
	order   []string
}

func newBlobRefs() *blobRefs {
	return &blobRefs{blobs: map[string]*storepb.ResourceBlob{}, created: map[string]bool{}, delta: map[string]int32{}}
}

func (b *blobRefs) add(sum string, n int32) {
	if _, ok := b.delta[sum]; !ok {
		b.order = append(b.order, sum)
	}
	b.delta[sum] += n
}

// create records a blob this transaction stores.
func (b *blobRefs) create(sum string, blob *storepb.ResourceBlob) {
	b.blobs[sum], b.created[sum] = blob, true
}

// resourceBlob reads a blob's document once per transaction (nil: none).
func (r *reader) resourceBlob(ctx context.Context, uuid, app, sum string, refs *blobRefs) (*storepb.ResourceBlob, error) {
	if b, ok := refs.blobs[sum]; ok {
		return b, nil
	}
	b := &storepb.ResourceBlob{}
	found, err := r.get(ctx, resourceBlobKey(uuid, app, sum), b)
	if err != nil {
		return nil, err
	}
	if !found {
		b = nil
	}
	refs.blobs[sum] = b
	return b, nil
}

// write applies the counted changes: a blob whose count falls to zero goes, with its chunks.
// Every blob counted must have been read (resourceBlob) or created.
func (b *blobRefs) write(w *writes, uuid, app string) error {
	for _, sum := range b.order {
		d, blob := b.delta[sum], b.blobs[sum]
		if blob == nil {
			if d > 0 {
				return fmt.Errorf("resource content %s of %q is not stored", sum, app)
			}
			continue // gone already: nothing names it
		}
		if d == 0 && !b.created[sum] {
			continue
		}
		blob.Refs += d
		if blob.Refs <= 0 {
			w.del(resourceBlobKey(uuid, app, sum))
			w.deleteRange(resourceChunksPrefix(uuid, app, sum, blob.Upload))
			continue
		}
		w.put(resourceBlobKey(uuid, app, sum), blob)
	}
	return nil
}

// hasResourceBlob reports whether an application has the content stored already.
func (s *State) hasResourceBlob(ctx context.Context, uuid, app, sum string) (bool, error) {
	return s.getDoc(ctx, resourceBlobKey(uuid, app, sum), &storepb.ResourceBlob{})
}

// storeResourceChunks writes content in chunks under a new upload id.
func (s *State) storeResourceChunks(ctx context.Context, uuid, app, sum string, content []byte) (string, int, error) {
	upload, err := newResourceID()
	if err != nil {
		return "", 0, err
	}
	n, err := s.putChunks(ctx, resourceChunksPrefix(uuid, app, sum, upload), content)
	if err != nil {
		return "", 0, fmt.Errorf("storing the content: %w", err)
	}
	return upload, n, nil
}

// resourceContent reads a blob's content back and checks it against its fingerprint.
func (s *State) resourceContent(ctx context.Context, uuid, app string, rev *storepb.ResourceRevision) ([]byte, error) {
	blob := &storepb.ResourceBlob{}
	found, err := s.getDoc(ctx, resourceBlobKey(uuid, app, rev.Fingerprint), blob)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errBlobGone
	}
	resp, err := s.kv.Get(ctx, resourceChunksPrefix(uuid, app, rev.Fingerprint, blob.Upload), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading resource %q: %w", rev.Name, err)
	}
	if len(resp.Kvs) != int(blob.Chunks) {
		return nil, errBlobGone
	}
	parts := make([][]byte, blob.Chunks)
	prefix := resourceChunksPrefix(uuid, app, rev.Fingerprint, blob.Upload)
	for _, kv := range resp.Kvs {
		n, err := strconv.Atoi(strings.TrimPrefix(string(kv.Key), prefix))
		if err != nil || n < 0 || n >= len(parts) {
			return nil, fmt.Errorf("reading resource %q: unexpected chunk %s", rev.Name, kv.Key)
		}
		parts[n] = kv.Value
	}
	data := bytes.Join(parts, nil)
	if int64(len(data)) != rev.Size || charm.ResourceFingerprint(data) != rev.Fingerprint {
		return nil, fmt.Errorf("reading resource %q: stored content does not match its fingerprint", rev.Name)
	}
	return data, nil
}

// usePendingResources makes pending uploads (name -> pending id) the application's next
// revisions, inside the deploy (AddApplication) or refresh (SetApplicationCharm) transaction
// that names them: each must be a file resource the new charm declares, uploaded for this
// application and not expired. It reports whether any revision was added.
func (r *reader) usePendingResources(ctx context.Context, w *writes, uuid, app string, meta *charm.Meta, pending map[string]string) (bool, error) {
	if len(pending) == 0 {
		return false, nil
	}
	refs := newBlobRefs()
	for _, name := range sortedKeysOf(pending) {
		id := pending[name]
		if _, err := declaredResource(meta, name); err != nil {
			return false, err
		}
		p := &storepb.ResourceRevision{}
		found := false
		if pendingIDRe.MatchString(id) {
			var err error
			if found, err = r.get(ctx, pendingResourceKey(uuid, app, id), p); err != nil {
				return false, err
			}
		}
		if !found || p.Name != name {
			return false, apierr.Errorf(apierr.NotFound, "pending upload %q of resource %q for application %q not found (uploads wait %s to be used): upload it again",
				id, name, app, PendingResourceTTL)
		}
		blob, err := r.resourceBlob(ctx, uuid, app, p.Fingerprint, refs)
		if err != nil {
			return false, err
		}
		if blob == nil {
			return false, apierr.Errorf(apierr.NotFound, "the content of pending resource %q is gone: upload it again", name)
		}
		cur, err := r.currentResource(ctx, uuid, app, name)
		if err != nil {
			return false, err
		}
		// The pending document's reference to the blob becomes the revision's.
		if cur != nil {
			if _, err := r.resourceBlob(ctx, uuid, app, cur.Fingerprint, refs); err != nil {
				return false, err
			}
			refs.add(cur.Fingerprint, -1)
		}
		rev := proto.Clone(p).(*storepb.ResourceRevision)
		rev.CharmUrl = ""
		rev.Revision = cur.GetRevision() + 1
		w.put(currentResourceKey(uuid, app, name), rev)
		w.del(pendingResourceKey(uuid, app, id))
	}
	return true, refs.write(w, uuid, app)
}

// expirePendingResources removes the pending uploads of the model older than
// PendingResourceTTL, each in its own transaction with its share of the content. Failures are
// left for the next upload: nothing depends on them.
func (s *State) expirePendingResources(ctx context.Context, uuid string) {
	prefix := ModelPrefix(uuid) + "pendingresources/"
	cutoff := s.now().Add(-PendingResourceTTL).UnixNano()
	var expired []string
	_ = s.eachPage(ctx, prefix, false, func(key string, value []byte) error {
		p := &storepb.ResourceRevision{}
		if proto.Unmarshal(value, p) == nil && p.Timestamp < cutoff {
			expired = append(expired, key[len(prefix):])
		}
		return nil
	})
	for _, rest := range expired {
		app, id, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		_ = s.run(ctx, "expiring a pending resource", func(ctx context.Context, r *reader) (*writes, error) {
			p := &storepb.ResourceRevision{}
			found, err := r.get(ctx, pendingResourceKey(uuid, app, id), p)
			if err != nil || !found || p.Timestamp >= cutoff {
				return nil, err
			}
			refs := newBlobRefs()
			if _, err := r.resourceBlob(ctx, uuid, app, p.Fingerprint, refs); err != nil {
				return nil, err
			}
			refs.add(p.Fingerprint, -1)
			w := &writes{}
			w.del(pendingResourceKey(uuid, app, id))
			return w, refs.write(w, uuid, app)
		})
	}
}

// ListResources returns an application's resources (unit empty) or, for a unit, its
// application's with that unit's alone.
func (s *State) ListResources(ctx context.Context, uuid, app, unit string) (*ApplicationResources, error) {
	if unit != "" {
		u, err := s.Unit(ctx, uuid, unit)
		if err != nil {
			return nil, err
		}
		app = u.Application
	}
	a, err := s.Application(ctx, uuid, app)
	if err != nil {
		return nil, err
	}
	doc, err := s.Charm(ctx, uuid, a.CharmUrl)
	if err != nil {
		return nil, err
	}
	meta, err := CharmMeta(doc)
	if err != nil {
		return nil, err
	}
	resp, err := s.kv.Get(ctx, appResourcesPrefix(uuid, app), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("reading resources of %q: %w", app, err)
	}
	current := map[string]*storepb.ResourceRevision{}
	fetched := map[string]map[string]*storepb.ResourceRevision{} // unit number -> name -> revision
	prefix := appResourcesPrefix(uuid, app)
	for _, kv := range resp.Kvs {
		rest := string(kv.Key)[len(prefix):]
		kind, rest, _ := strings.Cut(rest, "/")
		if kind != "current" && kind != "units" {
			continue
		}
		rev := &storepb.ResourceRevision{}
		if err := unmarshal(kv, rev); err != nil {
			return nil, err
		}
		if kind == "current" {
			current[rest] = rev
			continue
		}
		num, name, _ := strings.Cut(rest, "/")
		if fetched[num] == nil {
			fetched[num] = map[string]*storepb.ResourceRevision{}
		}
		fetched[num][name] = rev
	}
	out := &ApplicationResources{Application: app}
	declared := map[string]charm.Resource{}
	for _, res := range meta.FileResources() {
		declared[res.Name] = res
		out.Resources = append(out.Resources, Resource{Meta: res, Rev: current[res.Name]})
	}
	units := []string{unit}
	if unit == "" {
		if units, err = s.applicationUnitNames(ctx, uuid, app); err != nil {
			return nil, err
		}
	}
	for _, u := range units {
		_, num, _ := strings.Cut(u, "/")
		ur := UnitResources{Unit: u}
		for _, name := range sortedKeysOf(fetched[num]) {
			res, ok := declared[name]
			if !ok {
				res = charm.Resource{Name: name, Type: charm.ResourceFile}
			}
			ur.Resources = append(ur.Resources, Resource{Meta: res, Rev: fetched[num][name]})
		}
		out.Units = append(out.Units, ur)
	}
	return out, nil
}

// OpenUnitResource is resource-get: the current revision of a file resource of a unit's
// application, its content unless have is that revision's fingerprint (the unit's copy is up
// to date), and the record that the unit has it. A resource the charm declares but nobody
// uploaded is NotFound, in Juju's words.
func (s *State) OpenUnitResource(ctx context.Context, uuid, unit, name, have string) (Resource, []byte, error) {
	u, err := s.Unit(ctx, uuid, unit)
	if err != nil {
		return Resource{}, nil, err
	}
	a, err := s.Application(ctx, uuid, u.Application)
	if err != nil {
		return Resource{}, nil, err
	}
	meta, err := s.resourceMeta(ctx, uuid, a.CharmUrl, name)
	if errors.Is(err, apierr.NotFound) {
		return Resource{}, nil, apierr.Errorf(apierr.NotFound, "resource %q not found", name)
	}
	if err != nil {
		return Resource{}, nil, err
	}
	for attempt := 0; ; attempt++ {
		rev := &storepb.ResourceRevision{}
		found, err := s.getDoc(ctx, currentResourceKey(uuid, u.Application, name), rev)
		if err != nil {
			return Resource{}, nil, err
		}
		if !found {
			return Resource{}, nil, apierr.Errorf(apierr.NotFound, "resource %q not found", name)
		}
		var content []byte
		if have != rev.Fingerprint {
			content, err = s.resourceContent(ctx, uuid, u.Application, rev)
			if errors.Is(err, errBlobGone) && attempt < maxAttempts {
				continue // a new revision replaced it meanwhile: read that one
			}
			if err != nil {
				return Resource{}, nil, err
			}
		}
		if err := s.recordUnitResource(ctx, uuid, unit, rev); err != nil {
			return Resource{}, nil, err
		}
		return Resource{Meta: meta, Rev: rev}, content, nil
	}
}

// recordUnitResource records that a unit has a revision (juju resources <unit>); the unit
// must still exist, so that no record outlives it.
func (s *State) recordUnitResource(ctx context.Context, uuid, unit string, rev *storepb.ResourceRevision) error {
	return s.run(ctx, fmt.Sprintf("recording resource %q of unit %q", rev.Name, unit), func(ctx context.Context, r *reader) (*writes, error) {
		if _, err := r.unit(ctx, uuid, unit); err != nil {
			return nil, err
		}
		had := &storepb.ResourceRevision{}
		found, err := r.get(ctx, unitResourceKey(uuid, unit, rev.Name), had)
		if err != nil {
			return nil, err
		}
		if found && proto.Equal(had, rev) {
			return nil, nil
		}
		w := &writes{}
		w.put(unitResourceKey(uuid, unit, rev.Name), rev)
		return w, nil
	})
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := mapKeys(m)
	slices.Sort(keys)
	return keys
}

// currentResources reads the current revision of every application's resources of model uuid
// as of store revision rev, by application and resource name; units' records and blobs under
// the same prefix are skipped.
func (s *State) currentResources(ctx context.Context, uuid string, rev int64) (map[string]map[string]*storepb.ResourceRevision, error) {
	prefix := modelResourcesPrefix(uuid)
	resp, err := s.kv.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]*storepb.ResourceRevision{}
	for _, kv := range resp.Kvs {
		app, rest, _ := strings.Cut(string(kv.Key)[len(prefix):], "/")
		name, ok := strings.CutPrefix(rest, "current/")
		if !ok {
			continue
		}
		doc := &storepb.ResourceRevision{}
		if err := unmarshal(kv, doc); err != nil {
			return nil, err
		}
		if out[app] == nil {
			out[app] = map[string]*storepb.ResourceRevision{}
		}
		out[app][name] = doc
	}
	return out, nil
}
