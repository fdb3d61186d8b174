#!/usr/bin/env python3
"""Record every event with its Juju environment and the outcome of each hook tool call.

Each event gives one INFO line through juju-log, ``HOOKORDER <json>``, that tests read back
with ``juju debug-log --replay``: the event, the hook being dispatched, the JUJU_* environment,
and, for every hook tool ops called on the charm's behalf, "ok", "skip: <why>" or
"error: <what>". The unit is blocked, naming the failed tools, when any call failed.
"""

import json
import logging
import os

import ops

logger = logging.getLogger(__name__)

PEER = 'ring'
KV = 'kv'
PORT = 8080
SCRATCH_PORT = 9999

ENVIRONMENT = (
    'JUJU_VERSION',
    'JUJU_HOOK_NAME',
    'JUJU_DISPATCH_PATH',
    'JUJU_MODEL_NAME',
    'JUJU_MODEL_UUID',
    'JUJU_UNIT_NAME',
    'JUJU_MACHINE_ID',
    'JUJU_AVAILABILITY_ZONE',
    'JUJU_CHARM_DIR',
    'CHARM_DIR',
    'JUJU_CONTEXT_ID',
    'JUJU_RELATION',
    'JUJU_RELATION_ID',
    'JUJU_REMOTE_UNIT',
    'JUJU_REMOTE_APP',
    'JUJU_DEPARTING_UNIT',
    'JUJU_API_ADDRESSES',
    'PATH',
)

# Hooks in which the unit no longer writes relation data: it is leaving the relation, or
# (stop, remove) has left them all.
LEAVING = ('_relation_departed', '_relation_broken', 'stop', 'remove')


class HookOrderCharm(ops.CharmBase):
    """Observe every Juju event and call every hook tool ops has a use for."""

    _stored = ops.StoredState()

    def __init__(self, framework: ops.Framework):
        super().__init__(framework)
        self._stored.set_default(events=0, deferred_once=False)
        for bound in self.on.events().values():
            if issubclass(bound.event_type, ops.HookEvent):
                framework.observe(bound, self._on_event)

    def _on_event(self, event: ops.HookEvent):
        kind = event.handle.kind
        self._stored.events += 1
        record = {
            'event': kind,
            # A deferred event comes back at the start of a later hook's dispatch.
            'reemitted': os.environ.get('JUJU_DISPATCH_PATH') != 'hooks/' + kind.replace('_', '-'),
            'stored-events': self._stored.events,
            'env': {name: os.environ.get(name) for name in ENVIRONMENT},
        }
        tools, values = _Probe(), {}
        relation = getattr(event, 'relation', None)
        leaving = kind.endswith(LEAVING)

        values['config'] = tools.run('config-get', lambda: dict(self.config))
        leader = tools.run('is-leader', self.unit.is_leader)
        values['leader'] = leader
        values['unit-status'] = tools.run('status-get', lambda: _status(self.unit.status))
        if leader:
            values['app-status'] = tools.run(
                'status-get --application', lambda: _status(self.app.status)
            )
        else:
            tools.skip('status-get --application', 'not the leader')

        # ops lists a relation's units (relation-list) as it builds the relation.
        peers = tools.run('relation-ids, relation-list', lambda: self.model.relations[PEER])
        kvs = tools.run('relation-ids, relation-list ' + KV, lambda: self.model.relations[KV])
        peer = peers[0] if peers else None
        if peer is not None:
            values['peer-units'] = sorted(u.name for u in peer.units)
            values['peer-app-data'] = tools.run(
                'relation-get --app', lambda: dict(peer.data[self.app])
            )
            values['peer-unit-data'] = tools.run(
                'relation-get',
                lambda: {u.name: dict(peer.data[u]) for u in sorted(peer.units, key=_name)},
            )
            values['peer-model'] = tools.run(
                'relation-model-get', lambda: peer.remote_model.uuid
            )
            if leaving:
                tools.skip('relation-set', 'leaving')
                tools.skip('relation-set --app', 'leaving')
            else:
                # ops calls relation-set only for a change: the first hook that sees the peer
                # relation writes, and no hook starts a ring of relation-changed on the peers.
                tools.run(
                    'relation-set', lambda: peer.data[self.unit].update({'unit': self.unit.name})
                )
                if leader:
                    tools.run(
                        'relation-set --app',
                        lambda: peer.data[self.app].update({'leader': self.unit.name}),
                    )
                else:
                    tools.skip('relation-set --app', 'not the leader')
        else:
            tools.skip('relation-get', 'no peer relation')

        for rel in kvs or []:
            this = relation is not None and rel.id == relation.id
            if this and leaving:
                tools.skip('relation-get ' + KV, 'leaving')
                continue
            # Without remote units or the hook's JUJU_REMOTE_APP, ops asks relation-list --app.
            values['kv-app'] = rel.app.name if rel.app else None
            values['kv-app-data'] = tools.run(
                'relation-get --app ' + KV,
                lambda rel=rel: dict(rel.data[rel.app]) if rel.app else {},
            )
            values['kv-network'] = tools.run(
                'network-get -r', lambda rel=rel: _network(self.model.get_binding(rel))
            )
            if this:
                tools.run(
                    'relation-set ' + KV,
                    lambda rel=rel: rel.data[self.unit].update({'unit': self.unit.name}),
                )

        values['network'] = tools.run(
            'network-get', lambda: _network(self.model.get_binding(PEER))
        )
        values['planned-units'] = tools.run('goal-state', self.app.planned_units)

        tools.run('open-port', lambda: self.unit.open_port('tcp', PORT))
        tools.run('open-port (scratch)', lambda: self.unit.open_port('tcp', SCRATCH_PORT))
        tools.run('close-port', lambda: self.unit.close_port('tcp', SCRATCH_PORT))
        values['opened-ports'] = tools.run(
            'opened-ports',
            lambda: sorted(f'{p.port}/{p.protocol}' for p in self.unit.opened_ports()),
        )
        tools.run('application-version-set', lambda: self.unit.set_workload_version('1.0.0'))

        failed = tools.failed()
        if failed:
            status = ops.BlockedStatus('tool calls failed: ' + ', '.join(failed))
        else:
            status = ops.ActiveStatus(f'{self._stored.events} events, last {kind}')
        tools.run('status-set', lambda: setattr(self.unit, 'status', status))
        if leader:
            tools.run(
                'status-set --application',
                lambda: setattr(self.app, 'status', ops.ActiveStatus(f'led by {self.unit.name}')),
            )

        record['tools'] = tools.results
        record['values'] = values
        logger.info('HOOKORDER %s', json.dumps(record, sort_keys=True, default=str))

        # Deferring the first config-changed once makes ops save it (state-set), emit it again
        # at the start of the next hook and then drop it (state-delete).
        if kind == 'config_changed' and not self._stored.deferred_once:
            self._stored.deferred_once = True
            event.defer()


class _Probe:
    """Runs hook tool calls, keeping how each went."""

    def __init__(self):
        self.results = {}

    def run(self, name, call):
        try:
            value = call()
        except Exception as e:  # noqa: BLE001 - every failure is what the record is for
            self.results[name] = f'error: {type(e).__name__}: {e}'
            return None
        self.results.setdefault(name, 'ok')
        return value

    def skip(self, name, why):
        self.results.setdefault(name, f'skip: {why}')

    def failed(self):
        return sorted(n for n, r in self.results.items() if r.startswith('error'))


def _status(status: ops.StatusBase) -> str:
    return f'{status.name}: {status.message}'


def _network(binding: ops.Binding) -> dict:
    network = binding.network
    return {
        'bind-address': str(network.bind_address),
        'ingress-address': str(network.ingress_address),
        'egress-subnets': [str(s) for s in network.egress_subnets],
    }


def _name(unit: ops.Unit) -> str:
    return unit.name


if __name__ == '__main__':
    ops.main(HookOrderCharm, use_juju_for_storage=True)
