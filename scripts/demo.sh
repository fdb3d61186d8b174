#!/usr/bin/env bash
# make demo: bootstrap a local controller in a private JUJU_DATA, deploy the sample charms
# (their hooks run: mysql hands wordpress its credentials, haproxy balances wordpress, logging
# follows each wordpress unit), wait until every unit is active, and print status. The
# controller keeps running afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export JUJU_DATA="${JUJU_DATA:-$PWD/tmp/demo}"
export JUJU_REPOSITORY="$PWD/testdata/charms"
export PATH="$PWD/bin:$PATH"

if [ -f "$JUJU_DATA/controllers.yaml" ] && juju controllers 2>/dev/null | grep -q '^local'; then
  echo "Removing the previous demo controller" >&2
  juju kill-controller local --no-prompt
fi

set -x
juju bootstrap
juju deploy ./testdata/charms/wordpress -n 2 --constraints mem=2G
juju deploy mysql
juju add-unit mysql
juju deploy haproxy
juju deploy logging
juju add-machine --base ubuntu@22.04 --constraints cores=1
juju integrate wordpress mysql
juju integrate logging wordpress
juju integrate haproxy:reverseproxy wordpress
{ set +x; } 2>/dev/null

echo "Waiting for every unit to be active..." >&2
for _ in $(seq 1 600); do
  if ! juju status --format json | grep -qE '"current":"(allocating|pending|executing|maintenance|waiting|blocked|unknown)"'; then
    break
  fi
  sleep 0.1
done
juju status --relations
cat >&2 <<MSG

The controller is still running. Try:
  JUJU_DATA=$JUJU_DATA bin/juju status --format yaml
  JUJU_DATA=$JUJU_DATA bin/juju remove-application wordpress --dry-run
  JUJU_DATA=$JUJU_DATA bin/juju show-unit mysql/0
  JUJU_DATA=$JUJU_DATA bin/juju debug-log --replay --include wordpress/0
  JUJU_DATA=$JUJU_DATA bin/juju config mysql fail-hook=stop   # then remove-unit mysql/0: it stays in error
  JUJU_DATA=$JUJU_DATA bin/juju resolved mysql/0 --no-retry
  JUJU_DATA=$JUJU_DATA bin/juju kill-controller local --no-prompt
MSG
