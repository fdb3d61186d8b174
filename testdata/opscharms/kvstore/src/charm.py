#!/usr/bin/env python3
"""A key-value store whose leader hands out the cluster's access token."""

import logging
import secrets
import time

import ops

logger = logging.getLogger(__name__)

PEER = 'cluster'
KV = 'kv'


class KVStoreCharm(ops.CharmBase):
    """Serve key-value clients; the leader owns the cluster's token."""

    _stored = ops.StoredState()

    def __init__(self, framework: ops.Framework):
        super().__init__(framework)
        self._stored.set_default(update_count=0)
        for event in (
            self.on.install,
            self.on.leader_elected,
            self.on.leader_settings_changed,
            self.on.config_changed,
            self.on.start,
            self.on[PEER].relation_created,
            self.on[PEER].relation_joined,
            self.on[PEER].relation_changed,
            self.on[PEER].relation_departed,
            self.on[KV].relation_created,
            self.on[KV].relation_joined,
            self.on[KV].relation_changed,
            self.on[KV].relation_departed,
        ):
            framework.observe(event, self._reconcile)
        framework.observe(self.on.update_status, self._on_update_status)
        framework.observe(self.on.sleep_action, self._on_sleep_action)
        framework.observe(self.on.report_action, self._on_report_action)

    def _on_sleep_action(self, event: ops.ActionEvent):
        seconds = event.params['seconds']
        for i in range(int(seconds)):
            event.log(f'slept {i} of {seconds} seconds')
            time.sleep(1)
        time.sleep(seconds - int(seconds))
        event.set_results({'slept': seconds})

    def _on_report_action(self, event: ops.ActionEvent):
        if event.params.get('crash'):
            raise RuntimeError('crashed on request')
        event.log('reading the store')
        if 'fail' in event.params:
            event.fail(event.params['fail'])
            return
        print(f'reporting for {self.unit.name}')
        event.set_results({
            'store': {'port': self.config['port'], 'token': self._token() or ''},
            'unit': self.unit.name,
        })

    def _on_update_status(self, event: ops.UpdateStatusEvent):
        self._stored.update_count += 1
        self._reconcile(event)

    def _reconcile(self, _event: ops.EventBase):
        port = self.config['port']
        self.unit.set_ports(port)
        token = self._token()
        if token is None:
            self.unit.status = ops.WaitingStatus('waiting for the leader to generate a token')
            return
        if self.unit.is_leader():
            self._publish(token, port)
        message = f'{self.config["greeting"]} on port {port}, token={token}'
        if self._stored.update_count:
            message += f', update-status #{self._stored.update_count}'
        self.unit.status = ops.ActiveStatus(message)

    def _token(self) -> 'str | None':
        """The cluster's token from the peer application data; the leader makes it."""
        peers = self.model.get_relation(PEER)
        if peers is None:
            return None
        token = peers.data[self.app].get('token')
        if token is None and self.unit.is_leader():
            token = secrets.token_hex(8)
            peers.data[self.app]['token'] = token
            logger.info('generated the cluster token')
        return token

    def _publish(self, token: str, port: int):
        """Give every client the token and port, and sum the cluster up in the app status."""
        clients = []
        for relation in self.model.relations[KV]:
            relation.data[self.app].update({'token': token, 'port': str(port)})
            if relation.app is not None:
                clients.append(relation.data[relation.app].get('consumer', relation.app.name))
        peers = self.model.get_relation(PEER)
        units = 1 + (len(peers.units) if peers is not None else 0)
        message = f'{units} units'
        if clients:
            message += f', clients: {", ".join(sorted(clients))}'
        self.app.status = ops.ActiveStatus(message)


if __name__ == '__main__':
    ops.main(KVStoreCharm)
