package ssh

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jujuclone/juju/api/apierr"
	jujupb "github.com/jujuclone/juju/api/jujupb/v1"
	"github.com/jujuclone/juju/cmd/juju/cmdutil"
	"github.com/jujuclone/juju/cmd/juju/cmdutil/cmdtest"
	"github.com/jujuclone/juju/internal/testutil/golden"
	"github.com/jujuclone/juju/output"
)

const userKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO/ouXKD6+/xvlq9BNcqk3yJ8TzC8wg8oSK+pUJhJNnU me@host"

// fakeKeys is a model's key list, as the controller keeps it.
type fakeKeys struct {
	keys  []*jujupb.SSHKey
	err   error
	calls []string
}

func (f *fakeKeys) ListSSHKeys(_ context.Context, model string) ([]*jujupb.SSHKey, error) {
	f.calls = append(f.calls, "list "+model)
	return f.keys, f.err
}

func (f *fakeKeys) AddSSHKeys(_ context.Context, model string, keys []string) error {
	f.calls = append(f.calls, "add "+model+" "+strings.Join(keys, "|"))
	return f.err
}

func (f *fakeKeys) RemoveSSHKeys(_ context.Context, model string, ids []string) error {
	f.calls = append(f.calls, "remove "+model+" "+strings.Join(ids, "|"))
	return f.err
}

func TestNewCmdAddSSHKey(t *testing.T) {
	var got *addSSHKeyOptions
	cmd := NewCmdAddSSHKey(cmdutil.TestFactory(), func(o *addSSHKeyOptions) error { got = o; return nil })
	cmd.SetArgs([]string{userKey, "-m", "prod"})
	if err := cmd.Execute(); err != nil || len(got.Keys) != 1 || got.Keys[0] != userKey || got.Model != "prod" {
		t.Fatalf("opts = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		name string
	}{
		{args: nil, name: "no-key"},
		{args: []string{userKey, "not a key"}, name: "invalid-key"},
		{args: []string{"ssh-ed25519 AAAA\nsecond line"}, name: "two-lines"},
	} {
		called := false
		cmd := NewCmdAddSSHKey(cmdutil.TestFactory(), func(*addSSHKeyOptions) error { called = true; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		var fe *cmdutil.FlagError
		if err == nil || !errors.As(err, &fe) || called {
			t.Fatalf("%s: err = %v (usage %v), ran %v", tc.name, err, errors.As(err, &fe), called)
		}
		golden.Assert(t, "ERROR "+err.Error()+"\n", "add-ssh-key/"+tc.name+".error.golden")
	}
}

func TestAddSSHKeyRun(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	fake := &fakeKeys{}
	opts := &addSSHKeyOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (keysAPI, error) { return fake, nil }, Keys: []string{userKey}}
	if err := addSSHKeyRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if strings.Join(fake.calls, ";") != "add uuid-default "+userKey || out.Len()+errOut.Len() != 0 {
		t.Errorf("calls %q, output %q %q", fake.calls, out, errOut)
	}
	// The controller's refusal is the error, as it words it.
	fake.err = apierr.Errorf(apierr.AlreadyExists, "cannot add key %q: duplicate ssh key: %s", userKey, userKey)
	cmdtest.CheckErr(t, addSSHKeyRun(context.Background(), opts), fake.err.Error(), false)
}

func TestNewCmdRemoveSSHKey(t *testing.T) {
	var got *removeSSHKeyOptions
	cmd := NewCmdRemoveSSHKey(cmdutil.TestFactory(), func(o *removeSSHKeyOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "me@host 28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31"); err != nil ||
		strings.Join(got.IDs, " ") != "me@host 28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31" {
		t.Fatalf("opts = %+v, %v", got, err)
	}
	cmd = NewCmdRemoveSSHKey(cmdutil.TestFactory(), func(*removeSSHKeyOptions) error { return nil })
	err := cmdtest.Execute(cmd, "")
	cmdtest.CheckErr(t, err, "no ssh key id specified", true)
	golden.Assert(t, "ERROR "+err.Error()+"\n", "remove-ssh-key/no-id.error.golden")
}

func TestRemoveSSHKeyRun(t *testing.T) {
	ios, out, errOut := output.TestStreams()
	fake := &fakeKeys{}
	opts := &removeSSHKeyOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (keysAPI, error) { return fake, nil }, IDs: []string{"me@host", "bob"}}
	if err := removeSSHKeyRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if strings.Join(fake.calls, ";") != "remove uuid-default me@host|bob" || out.Len()+errOut.Len() != 0 {
		t.Errorf("calls %q, output %q %q", fake.calls, out, errOut)
	}
	fake.err = apierr.Errorf(apierr.NotFound, `cannot remove key id "bob": invalid ssh key: bob`)
	cmdtest.CheckErr(t, removeSSHKeyRun(context.Background(), opts), `cannot remove key id "bob": invalid ssh key: bob`, false)
}

func TestNewCmdSSHKeys(t *testing.T) {
	var got *sshKeysOptions
	cmd := NewCmdSSHKeys(cmdutil.TestFactory(), func(o *sshKeysOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "--full -m prod"); err != nil || !got.Full || got.Model != "prod" {
		t.Fatalf("opts = %+v, %v", got, err)
	}
	cmd = NewCmdSSHKeys(cmdutil.TestFactory(), func(*sshKeysOptions) error { return nil })
	cmdtest.CheckErr(t, cmdtest.Execute(cmd, "extra"), `unrecognized args: ["extra"]`, true)
}

func TestSSHKeysRun(t *testing.T) {
	keys := []*jujupb.SSHKey{
		{Key: userKey, Fingerprint: "28:46:33:ad:53:47:bd:13:19:41:8d:e0:5f:6b:8e:31", Comment: "me@host"},
		{Key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIH0c0b8fQ5s2m0lRZ4G0oJ5hCkP2wOe8wKq8l4b0rJ3x", Fingerprint: "0b:64:1d:6c:2a:9e:3a:51:17:c5:42:13:c6:5e:c2:07"},
	}
	for _, tc := range []struct {
		name string
		full bool
		keys []*jujupb.SSHKey
	}{
		{name: "list", keys: keys},
		{name: "full", keys: keys, full: true},
		{name: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, out, errOut := output.TestStreams()
			fake := &fakeKeys{keys: tc.keys}
			opts := &sshKeysOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (keysAPI, error) { return fake, nil }, Full: tc.full}
			if err := sshKeysRun(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			if len(tc.keys) == 0 {
				if out.Len() != 0 {
					t.Errorf("stdout = %q, want nothing", out)
				}
				golden.Assert(t, errOut.String(), "ssh-keys/"+tc.name+".stderr.golden")
				return
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q", errOut)
			}
			golden.Assert(t, out.String(), "ssh-keys/"+tc.name+".stdout.golden")
		})
	}
	ios, out, _ := output.TestStreams()
	fake := &fakeKeys{err: apierr.Errorf(apierr.NotFound, `model "gone" not found`)}
	opts := &sshKeysOptions{IO: ios, ResolveModel: testModel, Client: func(context.Context) (keysAPI, error) { return fake, nil }}
	cmdtest.CheckErr(t, sshKeysRun(context.Background(), opts), `model "gone" not found`, false)
	if out.Len() != 0 {
		t.Errorf("stdout = %q on failure", out)
	}
}
