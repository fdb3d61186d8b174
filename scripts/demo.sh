#!/usr/bin/env bash
# make demo: bootstrap a local controller in a private JUJU_DATA, deploy the sample charms,
# wait until every unit is idle, and print status. The controller keeps running afterwards.
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

echo "Waiting for units to be idle..." >&2
for _ in $(seq 1 300); do
  if ! juju status --format json | grep -qE '"current":"(allocating|pending|executing)"'; then
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
  JUJU_DATA=$JUJU_DATA bin/juju kill-controller local --no-prompt
MSG
