package hooktool

import "fmt"

// resourceGet prints the path of the unit's copy of a resource, as Juju does: without a
// newline (ops strips what it reads). A resource nobody uploaded fails with exit 1.
func resourceGet(t *invocation) error {
	if err := t.parse(1); err != nil {
		return err
	}
	name := t.arg(0)
	if name == "" {
		return usagef("missing required resource name")
	}
	path, err := t.c.ResourceGet(t.ctx, name)
	if err != nil {
		return fmt.Errorf("could not download resource: %w", err)
	}
	t.out.WriteString(path)
	return nil
}
