#!/usr/bin/env python3
"""A client of kvstore: active once the store has handed over its token."""

import ops

KV = 'kv'


class KVClientCharm(ops.CharmBase):
    """Show the store's token and port; blocked until there is a store."""

    def __init__(self, framework: ops.Framework):
        super().__init__(framework)
        for event in (
            self.on.install,
            self.on.leader_elected,
            self.on.config_changed,
            self.on.start,
            self.on.update_status,
            self.on[KV].relation_created,
            self.on[KV].relation_joined,
            self.on[KV].relation_changed,
            self.on[KV].relation_broken,
        ):
            framework.observe(event, self._reconcile)

    def _reconcile(self, event: ops.EventBase):
        relation = self.model.get_relation(KV)
        if isinstance(event, ops.RelationBrokenEvent) or relation is None or relation.app is None:
            self.unit.status = ops.BlockedStatus('waiting for kv')
            return
        if self.unit.is_leader():
            relation.data[self.app]['consumer'] = self.app.name
        store = relation.data[relation.app]
        if 'token' not in store:
            self.unit.status = ops.BlockedStatus('waiting for kv')
            return
        self.unit.status = ops.ActiveStatus(
            f'connected to {relation.app.name}: token={store["token"]} port={store.get("port")}'
        )


if __name__ == '__main__':
    ops.main(KVClientCharm)
