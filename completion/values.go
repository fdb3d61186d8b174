package completion

import (
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jujuclone/juju/core/base"
	"github.com/jujuclone/juju/core/constraints"
)

// usageChoiceRe finds "(a|b|c)" in a flag's usage.
var usageChoiceRe = regexp.MustCompile(`\(([a-z0-9-]+(?:\|[a-z0-9-]+)+)\)`)

// usageValues reads the choices a usage lists as "(a|b|c)".
func usageValues(usage string) []string {
	m := usageChoiceRe.FindStringSubmatch(usage)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], "|")
}

// bases are the bases Juju deploys workloads on, as --base takes them.
func bases() []string {
	return strings.Split(base.SupportedString(), ", ")
}

// constraintKeys are the keys of core/constraints, in its order, with what they take.
var constraintKeys = []struct{ key, about string }{
	{constraints.Arch, "architecture"},
	{constraints.Container, "container type"},
	{constraints.Cores, "number of CPU cores"},
	{constraints.CpuPower, "CPU power, 100 per core"},
	{constraints.InstanceRole, "instance role"},
	{constraints.InstanceType, "cloud instance type"},
	{constraints.Mem, "memory, in MB or with a suffix: 4G"},
	{constraints.RootDisk, "root disk size, in MB or with a suffix: 32G"},
	{constraints.RootDiskSource, "where the root disk comes from"},
	{constraints.Tags, "comma-separated tags, ^ to negate"},
	{constraints.Spaces, "comma-separated network spaces, ^ to negate"},
	{constraints.VirtType, "virtualisation type"},
	{constraints.Zones, "comma-separated availability zones"},
	{constraints.AllocatePublicIP, "true or false"},
	{constraints.ImageID, "image id"},
}

// constraintChoices are the values of the keys that take one of a fixed set.
var constraintChoices = map[string][]string{
	constraints.Arch:             constraints.Arches,
	constraints.Container:        constraints.ContainerTypes,
	constraints.AllocatePublicIP: {"true", "false"},
}

// constraintWord completes one key=value word: "key=" for a partial key (no space after, the
// value follows), the choices of a key that has a fixed set, and nothing for a free value such
// as mem=. set names keys already given, which are not offered again.
func constraintWord(word string, set []string) ([]string, cobra.ShellCompDirective) {
	if key, value, ok := strings.Cut(word, "="); ok {
		var out []string
		for _, v := range constraintChoices[key] {
			if strings.HasPrefix(v, value) {
				out = append(out, key+"="+v)
			}
		}
		return out, noFiles
	}
	var out []string
	for _, k := range constraintKeys {
		if strings.HasPrefix(k.key, word) && !slices.Contains(set, k.key) {
			out = append(out, k.key+"=\t"+k.about)
		}
	}
	return out, noFiles | cobra.ShellCompDirectiveNoSpace
}

// constraintValue completes the value of --constraints, which may hold several space-separated
// pairs when quoted: the last one is completed, the earlier ones kept.
func constraintValue(toComplete string) ([]string, cobra.ShellCompDirective) {
	head, word := "", toComplete
	if i := strings.LastIndex(toComplete, " "); i >= 0 {
		head, word = toComplete[:i+1], toComplete[i+1:]
	}
	out, directive := constraintWord(word, keysOf(strings.Fields(head)))
	for i := range out {
		out[i] = head + out[i]
	}
	return out, directive
}

// constraintWords completes constraint arguments (set-constraints, set-model-constraints),
// one key=value per argument.
func constraintWords(args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return constraintWord(toComplete, keysOf(args))
}

func keysOf(pairs []string) []string {
	var keys []string
	for _, p := range pairs {
		if k, _, ok := strings.Cut(p, "="); ok {
			keys = append(keys, k)
		}
	}
	return keys
}
