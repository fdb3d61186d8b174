# Sourced first by every hook (not a hook itself). It records the hook in hooks.log, so tests
# can check the order of hooks (seed 004), and makes the hooks named in the fail-hook and
# hang-hook options fail or hang on purpose, so tests can reach hook errors and time limits.
: "${JUJU_CHARM_DIR:=$PWD}"
hook=${JUJU_HOOK_NAME:-${0##*/}}
state=$JUJU_CHARM_DIR/.state # the unit's own notes between hooks
echo "$hook ${JUJU_REMOTE_UNIT:--}" >>"$JUJU_CHARM_DIR/hooks.log"

# One config-get for both options: every hook runs this, and each hook tool is a process.
fail= hang=
while IFS= read -r line; do
	case $line in
	fail-hook:*) fail=${line#fail-hook:} ;;
	hang-hook:*) hang=${line#hang-hook:} ;;
	esac
done <<EOF
$(config-get --all)
EOF
case " $fail " in *" $hook "*)
	echo "failing on purpose (fail-hook)" >&2
	exit 1
	;;
esac
case " $hang " in *" $hook "*)
	echo "hanging on purpose (hang-hook)" >&2
	exec sleep 2147483647
	;;
esac
