"""The real jubilant, unmodified, driving this project's `juju` as a charm's CI pipeline would.

Each ModelGroup class is one group of tests with its own model, deployed once for the group
(as jubilant's own integration suite has a temporary model per module). The tests hold our
binaries to Juju 3.6's contract as jubilant depends on it: the commands and flags it runs, the
JSON it parses into its dataclasses, the exit codes and the stderr phrases it turns into
exceptions (TaskError, TimeoutError, ValueError, CLIError).

The Go test e2e/jubilant_test.go bootstraps the controller, packs the charms and runs this file
through run.py, with:
  JUJU_DATA               the client store of the bootstrapped controller
  PATH                    our bin/ first, so jubilant's `juju` is ours
  PYTHONPATH              the parent of the jubilant package (../shared/thirdparty/jubilant-1.12.0)
  JUBILANT_E2E_CHARMS     the packed charms, <name>_<arch>.charm
  JUBILANT_E2E_ROOT       the project root (for testdata/charms)
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import platform
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid
from collections.abc import Callable, Iterator

import jubilant
from jubilant.statustypes import Status

CHARMS = pathlib.Path(os.environ.get('JUBILANT_E2E_CHARMS', '.'))
ROOT = pathlib.Path(os.environ.get('JUBILANT_E2E_ROOT', '.'))
# This project's shell charm: its hooks fail on request (fail-hook), and they are quick.
MYSQL = ROOT / 'testdata' / 'charms' / 'mysql'

# Waits are bounded by progress, not by the clock: a wait fails once the status has not changed
# for STALL seconds (a machine shared with other work may take minutes to run a charm's hooks,
# but something in the status moves meanwhile). WAIT only bounds a wait that keeps changing
# without ever getting there, and SETUP_LIMIT a group's setup and teardown.
STALL = 180.0
WAIT = 900.0
SETUP_LIMIT = 1200
# jubilant's default delay between two status calls is 1 s; these tests poll faster.
DELAY = 0.2


class Stalled(Exception):
    """Raised by wait() when the status stopped changing before the condition held."""


def charm(name: str) -> pathlib.Path:
    """The packed charm of that name (jubilant deploys a pathlib.Path as a local file)."""
    found = sorted(CHARMS.glob(f'{name}_*.charm'))
    if not found:
        raise AssertionError(f'no packed charm {name}_*.charm in {CHARMS}')
    return found[0]


def host_arch() -> str:
    return {'x86_64': 'amd64', 'aarch64': 'arm64'}.get(platform.machine(), platform.machine())


def progress_of(status: Status) -> tuple:
    """What moves while a model makes progress: every status value and message, but not the
    timestamps, which change on every call."""
    apps = []
    for name, app in sorted(status.apps.items()):
        units = tuple(
            (u, unit.workload_status.current, unit.workload_status.message,
             unit.juju_status.current, unit.juju_status.message, unit.juju_status.life)
            for u, unit in sorted(app.units.items())
        )
        apps.append((name, app.app_status.current, app.app_status.message, app.life, units))
    machines = tuple(
        (m, machine.juju_status.current, machine.juju_status.message, machine.machine_status.current)
        for m, machine in sorted(status.machines.items())
    )
    return tuple(apps), machines


def wait(
    juju: jubilant.Juju,
    ready: Callable[[Status], bool],
    *,
    error: Callable[[Status], bool] | None = jubilant.any_error,
) -> Status:
    """juju.wait, failing at once on any unit or application in error unless told otherwise,
    and failing (Stalled) once the status has stopped changing for STALL seconds."""
    last, changed = None, time.monotonic()

    def ready_or_stalled(status: Status) -> bool:
        nonlocal last, changed
        if ready(status):
            return True
        now = progress_of(status)
        if now != last:
            last, changed = now, time.monotonic()
        elif time.monotonic() - changed > STALL:
            raise Stalled(f'status unchanged for {STALL:.0f}s and not ready:\n{status}')
        return False

    return juju.wait(ready_or_stalled, error=error, delay=DELAY, timeout=WAIT)


@contextlib.contextmanager
def time_limit(seconds: int, what: str) -> Iterator[None]:
    """Raises TimeoutError in the block after seconds (subprocess.run kills its child then)."""

    def alarm(signum, frame):
        raise TimeoutError(f'{what}: still running after {seconds}s')

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def raw_status(juju: jubilant.Juju) -> tuple[dict, Status]:
    """`status --format json` as JSON and as jubilant's Status, checking the keys jubilant
    reads with a default (it would silently read a missing one as empty)."""
    raw = json.loads(juju.cli('status', '--format', 'json'))
    status = Status._from_dict(raw)
    where = json.dumps(raw, indent=1)
    assert raw['model'].get('model-status', {}).get('current'), f'no model-status:\n{where}'
    for app_name, app in raw['applications'].items():
        for key in ('charm', 'charm-name', 'charm-rev', 'charm-origin', 'exposed', 'base'):
            assert key in app, f'application {app_name} has no {key!r}:\n{where}'
        assert app.get('application-status', {}).get('current'), f'{app_name}: no status'
        for unit_name, unit in (app.get('units') or {}).items():
            assert unit.get('machine'), f'{unit_name} has no machine:\n{where}'
            for name, u in [(unit_name, unit), *(unit.get('subordinates') or {}).items()]:
                for key in ('workload-status', 'juju-status'):
                    assert u.get(key, {}).get('current'), f'{name} has no {key}:\n{where}'
    for machine_id, machine in raw['machines'].items():
        for key in ('juju-status', 'machine-status'):
            assert machine.get(key, {}).get('current'), f'machine {machine_id}: no {key}:\n{where}'
        assert 'base' in machine, f'machine {machine_id} has no base:\n{where}'
    return raw, status


def one_error_line(test: unittest.TestCase, exc: jubilant.CLIError, *wants: str) -> None:
    """The user sees one line, `ERROR <message>`, and the right exit code (1 or 2)."""
    lines = exc.stderr.strip().splitlines()
    test.assertEqual(len(lines), 1, f'want one ERROR line, got:\n{exc.stderr}')
    test.assertTrue(lines[0].startswith('ERROR '), lines[0])
    test.assertIn(exc.returncode, (1, 2), exc)
    for want in wants:
        test.assertIn(want, lines[0])


def error_text(exc: Exception) -> str:
    """What juju said on stderr (a CLIError's str also shows the command line)."""
    if isinstance(exc, jubilant.CLIError):
        return exc.stderr
    return str(exc)


def operations(juju: jubilant.Juju) -> int:
    """How many operations the model has had (`operations --format json`)."""
    out = juju.cli('operations', '--format', 'json')
    return len(json.loads(out) or {}) if out.strip() else 0


def models(juju: jubilant.Juju) -> set[str]:
    """Short names of the models the controller has, from `models --format json`."""
    out = json.loads(juju.cli('models', '--format', 'json', include_model=False))
    return {m.get('short-name') or m['name'].rpartition('/')[2] for m in out['models']}


class ModelGroup(unittest.TestCase):
    """A group of tests sharing one model. setUpModule starts every group's deployments at
    once (start: add-model, deploy), so that they overlap; the group's setUpClass then waits
    for its own (ready). The model is destroyed when the group is done; temp_model itself, whose
    teardown waits for every unit to go, is TestTempModel's business."""

    juju: jubilant.Juju
    config: dict | None = None
    _start_error: BaseException | None = None

    @classmethod
    def start(cls):
        if 'juju' in cls.__dict__:
            return
        cls.juju = jubilant.Juju()
        try:
            with time_limit(SETUP_LIMIT, f'starting {cls.__name__}'):
                cls.juju.add_model(f'jubilant-{cls.__name__.lower()}-{secrets.token_hex(4)}', config=cls.config)
                cls.deploy()
        except Exception as e:
            # Reported by the group's own setUpClass, not by setUpModule: one group's
            # trouble is not every group's.
            cls._start_error = e

    @classmethod
    def deploy(cls):
        """Starts the group's deployments; returns without waiting."""

    @classmethod
    def ready(cls):
        """Waits for what deploy started."""

    @classmethod
    def setUpClass(cls):
        cls.start()
        try:
            if cls._start_error is not None:
                raise cls._start_error
            with time_limit(SETUP_LIMIT, f'setting up {cls.__name__}'):
                cls.ready()
        except BaseException:
            # unittest skips tearDownClass after a failed setUpClass; the setup's error is the
            # one to report.
            with contextlib.suppress(Exception):
                cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.juju.model is not None:
            with time_limit(SETUP_LIMIT, f'destroying the model of {cls.__name__}'):
                cls.juju.destroy_model(cls.juju.model, destroy_storage=True, force=True, no_wait=True)

    def on_failure(self) -> str:
        """What run.py prints after a failure, as jubilant's own conftest does."""
        return f'last 40 lines of debug-log -m {self.juju.model}:\n' + self.juju.debug_log(limit=40)


def setUpModule():
    selected = os.environ.get('JUBILANT_E2E_CLASSES')
    for group in ModelGroup.__subclasses__():
        if selected is None or group.__name__ in selected.split():
            group.start()


class TestClient(unittest.TestCase):
    """Calls that need no model."""

    def test_version(self):
        juju = jubilant.Juju()
        version = juju.version()  # version --format json --all
        # The Juju version whose CLI and hook contract we speak: tools branch on it.
        self.assertEqual((version.major, version.minor), (3, 6), version)
        self.assertTrue(version.release, version)
        self.assertEqual(version.arch, host_arch())
        self.assertTrue(version.git_commit, f'version --all names no git-commit: {version!r}')
        plain = juju.cli('version', include_model=False).strip()
        self.assertEqual(plain, str(version))
        for fmt in ('json', 'yaml'):
            juju.cli('version', '--format', fmt, include_model=False)


class TestDBRelation(ModelGroup):
    """jubilant's own test charms, testdb and testapp, related: deploy, integrate, status,
    show-unit, config, trust, run, exec, debug-log."""

    @classmethod
    def deploy(cls):
        cls.juju.deploy(charm('testdb'))
        cls.juju.deploy(charm('testapp'))
        cls.juju.integrate('testdb', 'testapp')

    @classmethod
    def ready(cls):
        wait(cls.juju, jubilant.all_active)

    def test_status_parses(self):
        _, status = raw_status(self.juju)
        self.assertEqual(status.model.name, self.juju.model)
        self.assertEqual(status.model.type, 'iaas')
        self.assertEqual(status.model.controller, 'local')
        self.assertEqual(status.model.model_status.current, 'available')
        self.assertEqual(set(status.apps), {'testdb', 'testapp'})

        db = status.apps['testdb']
        self.assertEqual(db.charm_name, 'testdb')
        self.assertEqual(db.charm_origin, 'local')
        self.assertIsNotNone(db.base)
        self.assertEqual(db.app_status.current, 'active')
        self.assertEqual(db.app_status.message, 'relation created')
        self.assertEqual([r.related_app for r in db.relations['db']], ['testapp'])
        self.assertEqual(status.apps['testapp'].app_status.message, 'relation changed: dbkey=dbvalue')

        for app in status.apps.values():
            self.assertTrue(app.is_active)
            self.assertEqual(len(app.units), 1)
            for unit in app.units.values():
                self.assertTrue(unit.is_active)
                self.assertTrue(unit.leader)
                self.assertEqual(unit.juju_status.current, 'idle')
                machine = status.machines[unit.machine]
                self.assertEqual(unit.public_address, machine.dns_name)
                self.assertEqual(machine.juju_status.current, 'started')
                self.assertTrue(machine.instance_id)
                self.assertIsNotNone(machine.base)

        self.assertTrue(jubilant.all_active(status, 'testdb', 'testapp'))
        self.assertFalse(jubilant.any_error(status))
        self.assertFalse(jubilant.all_active(status, 'nosuchapp'))
        # The model's agent version: the Juju version whose contract we speak, as show-model's
        # agent-version says.
        self.assertTrue(status.model.version.startswith('3.6.'), f'model version {status.model.version}')

    def test_wait_all_agents_idle(self):
        status = wait(self.juju, jubilant.all_agents_idle)
        self.assertTrue(jubilant.all_agents_idle(status, 'testdb', 'testapp'))

    def test_show_unit(self):
        info = self.juju.show_unit('testapp/0')
        self.assertIsInstance(info, jubilant.UnitInfo)
        self.assertIn('testapp', info.charm)
        self.assertTrue(info.leader)
        self.assertEqual(info.life, 'alive')
        self.assertTrue(info.machine)
        self.assertTrue(info.public_address)
        self.assertEqual(info.opened_ports, [])
        db = [r for r in info.relation_info if r.endpoint == 'db']
        self.assertEqual(len(db), 1, info.relation_info)
        self.assertEqual(db[0].related_endpoint, 'db')
        # testdb's application data, as testapp sees it.
        self.assertEqual(db[0].app_data, {'dbkey': 'dbvalue'})
        self.assertEqual(list(db[0].related_units), ['testdb/0'])
        self.assertTrue(db[0].related_units['testdb/0'].in_scope)

        # And the other side: testapp has set no application data.
        other = self.juju.show_unit('testdb/0')
        self.assertEqual(other.life, 'alive')
        self.assertEqual([(r.endpoint, r.app_data) for r in other.relation_info], [('db', {})])

    def test_config_get_set_reset(self):
        self.assertEqual(self.juju.config('testdb')['testoption'], '')
        try:
            self.juju.config('testdb', {'testoption': 'foo bar'})
            self.assertEqual(self.juju.config('testdb')['testoption'], 'foo bar')
            # The unit sees it too, through config-get in its hook context.
            task = self.juju.exec('config-get testoption', unit='testdb/0')
            self.assertEqual(task.stdout.strip(), 'foo bar')
        finally:
            self.juju.config('testdb', reset='testoption')
        self.assertEqual(self.juju.config('testdb')['testoption'], '')

    def test_config_app_config_and_trust(self):
        self.assertIs(self.juju.config('testdb', app_config=True)['trust'], False)
        self.juju.trust('testdb')
        self.assertIs(self.juju.config('testdb', app_config=True)['trust'], True)
        self.juju.trust('testdb', remove=True)
        self.assertIs(self.juju.config('testdb', app_config=True)['trust'], False)

    def test_run_success(self):
        try:
            self.juju.config('testdb', {'testoption': 'foobar'})
            task = self.juju.run('testdb/0', 'do-thing', {'param1': 'value1', 'mode': 'fast'})
        finally:
            self.juju.config('testdb', reset='testoption')
        self.assertTrue(task.success, task)
        self.assertEqual(task.status, 'completed')
        self.assertEqual(task.return_code, 0)
        self.assertTrue(task.id)
        self.assertEqual(
            task.results,
            {
                'config': {'testoption': 'foobar'},
                'params': {'param1': 'value1', 'mode': 'fast'},
                'thingy': 'foo',
            },
        )
        # app/leader names the leader; without params the action gets none.
        task = self.juju.run('testdb/leader', 'do-thing')
        self.assertTrue(task.success, task)
        self.assertEqual(task.results['thingy'], 'foo')

    def test_run_action_fails(self):
        with self.assertRaises(jubilant.TaskError) as cm:
            self.juju.run('testdb/0', 'do-thing', {'error': 'ERR'})
        task = cm.exception.task
        self.assertFalse(task.success)
        self.assertEqual(task.status, 'failed')
        self.assertEqual(task.return_code, 0)  # event.fail: the hook itself succeeded
        self.assertEqual(task.message, 'failed with error: ERR')

    def test_run_action_exception(self):
        with self.assertRaises(jubilant.TaskError) as cm:
            self.juju.run('testdb/0', 'do-thing', {'exception': 'EXC'})
        task = cm.exception.task
        self.assertEqual(task.status, 'failed')
        self.assertNotEqual(task.return_code, 0)
        self.assertIn('EXC', task.stderr)

    def test_run_timeout(self):
        with self.assertRaises(TimeoutError):
            self.juju.run('testdb/0', 'do-thing', wait=0.001)
        # The action goes on after the CLI gave up, and the tests after this one expect the unit
        # idle: the unit runs its actions in turn, so once a second one has completed the first
        # has too; then the agent goes idle.
        task = self.juju.run('testdb/0', 'do-thing', wait=60)
        self.assertTrue(task.success, task)
        wait(self.juju, jubilant.all_agents_idle)

    def test_run_unknown_action(self):
        before = operations(self.juju)
        with self.assertRaises(ValueError) as cm:
            self.juju.run('testdb/0', 'action-not-defined')
        self.assertIn('action-not-defined', error_text(cm.exception))
        self.assertEqual(operations(self.juju), before, 'a refused run queued nothing')

    def test_run_unknown_unit(self):
        # Real Juju 3.6 makes jubilant raise ValueError here (its own suite checks that).
        with self.assertRaises((ValueError, jubilant.CLIError)) as cm:
            self.juju.run('testdb/42', 'do-thing')
        self.assertIn('testdb/42', error_text(cm.exception))

    def test_run_params_fail_schema(self):
        before = operations(self.juju)
        with self.assertRaises(jubilant.CLIError) as cm:
            self.juju.run('testdb/0', 'do-thing', {'mode': 5})  # mode: type string
        one_error_line(self, cm.exception, 'mode')
        self.assertEqual(operations(self.juju), before, 'a refused run queued nothing')

    def test_exec_unit(self):
        task = self.juju.exec('echo foo', unit='testdb/0')
        self.assertTrue(task.success, task)
        self.assertEqual(task.stdout, 'foo\n')
        self.assertEqual(task.stderr, '')
        task = self.juju.exec('echo', 'bar', 'baz', unit='testdb/0')
        self.assertEqual(task.stdout, 'bar baz\n')
        # The unit's hook context: its environment and the hook tools.
        task = self.juju.exec('echo $JUJU_UNIT_NAME; is-leader', unit='testdb/leader')
        self.assertEqual(task.stdout, 'testdb/0\nTrue\n')

    def test_exec_machine(self):
        machine = self.juju.status().apps['testdb'].units['testdb/0'].machine
        task = self.juju.exec('echo foo', machine=machine)
        self.assertTrue(task.success, task)
        self.assertEqual(task.stdout, 'foo\n')
        task = self.juju.exec('echo', 'bar', 'baz', machine=int(machine))
        self.assertEqual(task.stdout, 'bar baz\n')

    def test_exec_failure(self):
        with self.assertRaises(jubilant.TaskError) as cm:
            self.juju.exec('sleep x', unit='testdb/0')
        task = cm.exception.task
        self.assertFalse(task.success)
        self.assertEqual(task.stdout, '')
        self.assertIn('invalid time', task.stderr)
        with self.assertRaises(jubilant.TaskError) as cm:
            self.juju.exec('echo out; exit 3', unit='testdb/0')
        self.assertEqual(cm.exception.task.return_code, 3)
        self.assertEqual(cm.exception.task.stdout, 'out\n')

    def test_exec_timeout(self):
        with self.assertRaises(TimeoutError):
            self.juju.exec('sleep 1', unit='testdb/0', wait=0.001)

    def test_exec_unknown_unit(self):
        with self.assertRaises((ValueError, jubilant.CLIError)) as cm:
            self.juju.exec('echo foo', unit='testdb/42')
        self.assertIn('testdb/42', error_text(cm.exception))

    def test_debug_log_limit(self):
        log = self.juju.debug_log(limit=5)  # returns: --limit prints the last lines and exits
        lines = log.splitlines()
        self.assertEqual(len(lines), 5, log)
        everything = self.juju.debug_log(limit=100000).splitlines()
        self.assertGreater(len(everything), 5)
        self.assertTrue(any('unit-testdb-0' in line for line in everything), everything[-20:])
        for line in lines:
            self.assertRegex(line, r'^(machine|unit|application|model|controller)-[^:]*: ')


class TestMachines(ModelGroup):
    """Machines and what reaches them: ssh, scp, ssh keys, a slow action."""

    @classmethod
    def deploy(cls):
        cls.juju.deploy(charm('kvstore'))

    @classmethod
    def ready(cls):
        status = wait(cls.juju, lambda s: jubilant.all_active(s, 'kvstore'))
        cls.machine = status.apps['kvstore'].units['kvstore/0'].machine

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix='jubilant-e2e-'))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    # Each `juju ssh` runs the remote user's shell, which may take seconds to start: these
    # tests make few of them, and check files copied by scp by copying them back.

    def test_ssh(self):
        # The command goes through the remote shell; ssh options after the target pass through.
        out = self.juju.ssh('kvstore/0', 'echo UNIT $((6 * 7))', ssh_options=['-o', 'ConnectTimeout=30'])
        self.assertEqual(out, 'UNIT 42\n')
        self.assertEqual(self.juju.ssh(int(self.machine), 'echo', 'MACHINE'), 'MACHINE\n')

    def test_ssh_stdin_and_exit_status(self):
        with self.assertRaises(jubilant.CLIError) as cm:
            self.juju.cli('ssh', 'kvstore/0', 'cat; exit 7', stdin='foo')
        self.assertEqual(cm.exception.returncode, 7, 'juju ssh exits with the remote status')
        self.assertEqual(cm.exception.stdout, 'foo')

    def test_scp_both_directions(self):
        remote = f'/tmp/jubilant-e2e-{secrets.token_hex(4)}'
        self.addCleanup(self.juju.ssh, 'kvstore/0', 'rm', '-rf', f'{remote}.txt', f'{remote}.d')

        # A file, to the unit and back.
        (self.tmp / 'hello.txt').write_text('hello from the client\n')
        self.juju.scp(self.tmp / 'hello.txt', f'kvstore/0:{remote}.txt')
        self.juju.scp(f'kvstore/0:{remote}.txt', self.tmp / 'back.txt')
        self.assertEqual((self.tmp / 'back.txt').read_text(), 'hello from the client\n')

        # A directory with -r, to the machine and back from the unit (on that machine).
        src = self.tmp / 'src' / 'mydir'
        src.mkdir(parents=True)
        (src / 'a.txt').write_text('A')
        (src / 'b.txt').write_text('B')
        self.juju.scp(src, f'{self.machine}:{remote}.d', scp_options=['-r'])
        dst = self.tmp / 'dst'
        self.juju.scp(f'kvstore/0:{remote}.d', dst, scp_options=['-r'])
        self.assertEqual((dst / 'a.txt').read_text(), 'A')
        self.assertEqual((dst / 'b.txt').read_text(), 'B')

    def test_ssh_keys(self):
        comment = f'jubilant-e2e-{secrets.token_hex(4)}@example'
        key = self.tmp / 'id_ed25519'
        subprocess.run(
            ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', str(key)],
            check=True,
        )
        public = (self.tmp / 'id_ed25519.pub').read_text().strip()

        self.juju.add_ssh_key(public)
        self.addCleanup(self.remove_key_quietly, comment)
        self.assertIn(comment, self.juju.cli('ssh-keys'))
        self.assertIn(public, self.juju.cli('ssh-keys', '--full'))
        # jubilant's own machine tests log in with their key this way.
        self.assertEqual(self.juju.ssh('kvstore/0', 'echo', 'KEY', ssh_options=['-i', str(key)]), 'KEY\n')

        self.juju.remove_ssh_key(comment)
        self.assertNotIn(comment, self.juju.cli('ssh-keys'))

        with self.assertRaises(jubilant.CLIError) as cm:
            self.juju.add_ssh_key('not-a-key')
        one_error_line(self, cm.exception)
        self.assertNotIn('not-a-key', self.juju.cli('ssh-keys', '--full'))

    def remove_key_quietly(self, comment):
        with contextlib.suppress(jubilant.CLIError):
            self.juju.remove_ssh_key(comment)

    def test_run_nested_results_log_and_stdout(self):
        task = self.juju.run('kvstore/leader', 'report')
        self.assertTrue(task.success, task)
        token = self.juju.status().apps['kvstore'].units['kvstore/0'].workload_status.message
        token = token.partition('token=')[2].partition(',')[0]
        # action-set keys with dots come back nested; every value is a string, as in Juju.
        self.assertEqual(
            task.results, {'store': {'port': '7070', 'token': token}, 'unit': 'kvstore/0'}
        )
        # Juju prefixes each action-log line with its time.
        self.assertEqual(len(task.log), 1, task.log)
        self.assertTrue(task.log[0].endswith(' reading the store'), task.log)
        self.assertEqual(task.stdout, 'reporting for kvstore/0\n')
        # A bad param is refused before anything is queued (additionalProperties: false).
        with self.assertRaises(jubilant.CLIError) as cm:
            self.juju.run('kvstore/0', 'report', {'nosuchparam': 1})
        one_error_line(self, cm.exception, 'nosuchparam')

    def test_run_slow_action_times_out(self):
        started = time.monotonic()
        with self.assertRaises(TimeoutError):
            self.juju.run('kvstore/0', 'sleep', {'seconds': 3}, wait=0.5)
        self.assertLess(time.monotonic() - started, 3, '--wait gave up at its deadline')
        # The action itself goes on and completes; the next one runs after it.
        task = self.juju.run('kvstore/0', 'sleep', {'seconds': 0}, wait=60)
        self.assertTrue(task.success, task)


class TestLifecycle(ModelGroup):
    """Units and applications come and go, hooks fail: wait sees it, status always parses."""

    # A failed hook stays failed until resolved, so that the tests see it (and resolve it)
    # without racing the uniter's retries.
    config = {'automatically-retry-hooks': False}

    def test_add_and_remove_units(self):
        self.juju.deploy(MYSQL, 'db2')
        wait(self.juju, lambda s: jubilant.all_active(s, 'db2'))
        self.juju.add_unit('db2', num_units=2)
        status = wait(
            self.juju, lambda s: len(s.apps['db2'].units) == 3 and jubilant.all_active(s, 'db2')
        )
        self.assertEqual(set(status.apps['db2'].units), {'db2/0', 'db2/1', 'db2/2'})

        # A subordinate: its units are under their principals' in status. (mysql has only
        # ubuntu@22.04; logging would default to the newest of its bases.)
        self.juju.deploy(ROOT / 'testdata' / 'charms' / 'logging', base='ubuntu@22.04')
        self.juju.integrate('logging', 'db2')
        status = wait(
            self.juju,
            lambda s: len(s.get_units('logging')) == 3 and jubilant.all_active(s, 'db2', 'logging'),
        )
        self.assertEqual(status.apps['logging'].subordinate_to, ['db2'])
        for name, unit in status.apps['db2'].units.items():
            subs = list(unit.subordinates)
            self.assertEqual(len(subs), 1, f'{name} has subordinates {subs}')
            self.assertTrue(subs[0].startswith('logging/'), subs)
            self.assertEqual(unit.subordinates[subs[0]].workload_status.message, f'logging {name}')
        raw_status(self.juju)

        self.juju.remove_unit('db2/1', 'db2/2')
        self.watch_until(
            lambda s: set(s.apps['db2'].units) == {'db2/0'} and len(s.get_units('logging')) == 1
        )

        self.juju.remove_application('db2', destroy_storage=True)
        self.watch_until(lambda s: 'db2' not in s.apps and not s.get_units('logging'))
        self.juju.remove_application('logging')
        self.watch_until(lambda s: not s.apps)

    def test_hook_error_seen_by_wait_then_resolved(self):
        self.juju.deploy(MYSQL, config={'fail-hook': 'start'})
        with self.assertRaises(jubilant.WaitError):
            wait(self.juju, lambda s: jubilant.all_active(s, 'mysql'))
        _, status = raw_status(self.juju)
        unit = status.apps['mysql'].units['mysql/0']
        self.assertTrue(unit.is_error)
        self.assertEqual(unit.workload_status.message, 'hook failed: "start"')
        self.assertTrue(jubilant.any_error(status, 'mysql'))
        self.assertTrue(jubilant.all_error(status, 'mysql'))

        self.juju.config('mysql', reset='fail-hook')
        self.juju.cli('resolved', 'mysql/0')  # retries the hook, as Juju 3.6 does by default
        status = wait(self.juju, lambda s: jubilant.all_active(s, 'mysql'))
        self.assertEqual(status.apps['mysql'].units['mysql/0'].workload_status.message, 'ready')

        # A unit in error blocks its own removal: it stays dying, and status shows it.
        self.juju.config('mysql', {'fail-hook': 'stop'})
        self.juju.remove_application('mysql')
        status = wait(self.juju, lambda s: jubilant.any_error(s, 'mysql'), error=None)
        self.assertEqual(
            status.apps['mysql'].units['mysql/0'].workload_status.message, 'hook failed: "stop"'
        )
        raw, _ = raw_status(self.juju)
        self.assertEqual(raw['applications']['mysql'].get('life'), 'dying')
        self.assertEqual(raw['applications']['mysql']['units']['mysql/0']['juju-status'].get('life'), 'dying')
        self.assertEqual(self.juju.show_unit('mysql/0').life, 'dying')

        # Nothing is run on a dying unit: one clear error, nothing queued.
        before = operations(self.juju)
        with self.assertRaises((ValueError, jubilant.CLIError)) as cm:
            self.juju.run('mysql/0', 'sleep', {'seconds': 0})
        self.assertIn('mysql/0', error_text(cm.exception))
        self.assertEqual(operations(self.juju), before)

        # --force is the way out of a hook that keeps failing (jubilant's force=True keeps
        # Juju's grace period; --no-wait ends it now).
        self.juju.cli('remove-application', 'mysql', '--force', '--no-wait', '--no-prompt')
        self.watch_until(lambda s: 'mysql' not in s.apps)

    def watch_until(self, done: Callable[[Status], bool]) -> None:
        """Polls status, checking each as raw_status does, until done; fails once it has not
        changed for STALL seconds."""
        last, changed = None, time.monotonic()
        while True:
            _, status = raw_status(self.juju)
            if done(status):
                return
            now = progress_of(status)
            if now != last:
                last, changed = now, time.monotonic()
            elif time.monotonic() - changed > STALL:
                self.fail(f'status unchanged for {STALL:.0f}s; last status:\n{status}')
            time.sleep(DELAY)


class TestModel(ModelGroup):
    """The model itself: show-model, model-config."""

    def test_show_model(self):
        info = self.juju.show_model()
        self.assertIsInstance(info, jubilant.ModelInfo)
        self.assertEqual(info.name, f'admin/{self.juju.model}')
        self.assertEqual(info.short_name, self.juju.model)
        self.assertEqual(info.model_type, 'iaas')
        self.assertEqual(info.controller_name, 'local')
        self.assertFalse(info.is_controller)
        self.assertEqual(info.life, 'alive')
        self.assertEqual(info.status.current, 'available')
        self.assertTrue(info.cloud)
        self.assertTrue(info.agent_version.startswith('3.6.'), info.agent_version)
        uuid.UUID(info.model_uuid)
        uuid.UUID(info.controller_uuid)
        self.assertEqual(info.users['admin'].access, 'admin')

        for ref in (self.juju.model, f'admin/{self.juju.model}', f'local:admin/{self.juju.model}'):
            self.assertEqual(self.juju.show_model(ref).model_uuid, info.model_uuid, ref)
        controller = self.juju.show_model('controller')
        self.assertTrue(controller.is_controller)
        self.assertEqual(controller.controller_uuid, info.controller_uuid)
        self.assertIn('0', controller.machines)

    def test_model_config_defaults(self):
        config = self.juju.model_config()
        self.assertEqual(config['update-status-hook-interval'], '5m')
        # Juju 3.6's default: a failed hook is retried by the unit agent itself.
        self.assertIs(config['automatically-retry-hooks'], True)
        self.assertIn('logging-config', config)
        self.assertIn('default-base', config)

    def test_model_config_set_and_reset(self):
        keys = ['update-status-hook-interval', 'automatically-retry-hooks', 'logging-config']
        defaults = {k: self.juju.model_config()[k] for k in keys}
        values = {
            'update-status-hook-interval': '10s',
            'automatically-retry-hooks': False,
            'logging-config': '<root>=DEBUG',
        }
        try:
            self.juju.model_config(values)
            config = self.juju.model_config()
            self.assertEqual({k: config[k] for k in keys}, values)
        finally:
            self.juju.model_config(reset=keys)
        config = self.juju.model_config()
        self.assertEqual({k: config[k] for k in keys}, defaults)

    def test_model_config_refuses_bad_input(self):
        before = self.juju.model_config()
        # What the one line must name: the unknown key, or the value that is not of its type.
        for values, want in (
            ({'no-such-key': 'x'}, 'no-such-key'),
            ({'update-status-hook-interval': 'soon'}, '"soon"'),
            ({'automatically-retry-hooks': 'maybe'}, 'maybe'),
        ):
            with self.subTest(values=values):
                with self.assertRaises(jubilant.CLIError) as cm:
                    self.juju.model_config(values)
                one_error_line(self, cm.exception, want)
        self.assertEqual(self.juju.model_config(), before)


class TestTempModel(unittest.TestCase):
    """temp_model creates a model with its config and leaves none behind."""

    def test_temp_model(self):
        with jubilant.temp_model(config={'update-status-hook-interval': '7s'}) as juju:
            name = juju.model
            self.assertTrue(name.startswith('jubilant-'), name)
            self.assertIn(name, models(juju))
            self.assertEqual(juju.model_config()['update-status-hook-interval'], '7s')
            juju.deploy(MYSQL)
            wait(juju, lambda s: jubilant.all_active(s, 'mysql'))
        # destroy-model --no-prompt --destroy-storage --force returned: the model is gone.
        self.assertIsNone(juju.model)
        self.assertNotIn(name, models(juju))
        with self.assertRaises(jubilant.CLIError):
            juju.show_model(name)


def tearDownModule():
    # Nothing but the two models bootstrap made should be left once the groups are done
    # (their models may take a moment to go).
    deadline = time.monotonic() + 60
    while True:
        left = models(jubilant.Juju()) - {'controller', 'default'}
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f'models left behind: {sorted(left)}')
        time.sleep(DELAY)
