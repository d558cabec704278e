#!/usr/bin/env python3
"""Issue 35's attack table, measured: each of the twelve findings tried against a real
`quiver serve` on 127.0.0.1 with TLS, two bearer tokens (the attacker's and a victim's)
and default options (a finding that needs other options says which), reporting the time to
the error, the victim token's one-row query latency during the attack, the server's peak
RSS and the bytes it holds on disk.

    python3 bench/attack/attack_table.py --quiver build/release/quiver [--scale 1] \
        [--only 1,2,3] [--orphan-wait] [--node-driver]

Prints one line per measurement as it goes and the table (markdown) at the end. The
server's temp directory is private (TMPDIR), so its spill files are counted exactly.
Needs Python 3.9+; finding 5 uses source addresses 127.0.0.2 and up (Linux routes all of
127/8 to lo). Finding 8 needs an S3 store and is not measured here; finding 10 runs the
Node driver's regression test when --node-driver is given and its node_modules exist.
"""
import argparse
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tcli  # noqa: E402

MiB = 1 << 20
ATTACKER, VICTIM = 'attacker-token-0123456789', 'victim-token-0123456789'
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))


def log(*a):
    print(*a, flush=True)


def tree_bytes(path, exclude=None):
    total = 0
    for d, dirs, files in os.walk(path):
        if exclude and os.path.abspath(d).startswith(exclude):
            continue
        for f in files:
            try:
                total += os.lstat(os.path.join(d, f)).st_size
            except OSError:
                pass
    return total


def rss_bytes(pid):
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def metric(text, line_prefix, key):
    for line in text.splitlines():
        if line.startswith(line_prefix):
            for part in line.split():
                if part.startswith(key + '='):
                    return int(part.split('=', 1)[1])
    return -1


class Server:
    """`quiver serve` in its own temp directory, with the attacker's and the victim's tokens."""

    def __init__(self, quiver, scale, extra=()):
        self.dir = tempfile.mkdtemp(prefix='quiver-attack-')
        self.tmp = os.path.join(self.dir, 'tmp')
        os.makedirs(self.tmp)
        with open(os.path.join(self.dir, 'tokens'), 'w') as f:
            f.write(VICTIM + '\n')
        env = dict(os.environ, QUIVER_TOKEN=ATTACKER, TMPDIR=self.tmp)
        self.args = [quiver, 'serve', '--port', '0', '--cert-dir', self.dir, '--tokens-file',
                     os.path.join(self.dir, 'tokens'), '--tpch', str(scale), *extra]
        self.out = open(os.path.join(self.dir, 'serve.out'), 'w+')
        self.proc = subprocess.Popen(self.args, env=env, stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 600
        text = ''
        while 'ready\n' not in text:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'quiver serve did not start: {text}')
            time.sleep(0.1)
            self.out.seek(0)
            text = self.out.read()
        self.start_text = text
        fields = dict(line.split(': ', 1) for line in text.splitlines() if ': ' in line)
        self.port, self.path, self.cert = int(fields['port']), fields['path'], fields['certificate']
        self.pid = self.proc.pid
        self.tpch_dir = os.path.join(self.tmp, f'quiver-serve-tpch-{self.pid}')

    def client(self, token, **kw):
        return tcli.Client('127.0.0.1', self.port, self.path, token, self.cert, **kw)

    def alive(self):
        return self.proc.poll() is None

    def disk(self):
        """Bytes of files under the server's temp directory, its generated TPC-H data left out."""
        return tree_bytes(self.tmp, exclude=os.path.abspath(self.tpch_dir))

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Probe:
    """The victim token's one-row query, on a new connection every `every_s`, while an attack
    runs; also samples the server's RSS and disk bytes."""

    def __init__(self, server, every_s=0.25, sql='SELECT count(*) FROM region'):
        self.server, self.every_s, self.sql = server, every_s, sql
        self.latencies, self.errors, self.peak_rss, self.peak_disk = [], [], 0, 0
        self.stop_flag = threading.Event()
        self.client = server.client(VICTIM, timeout_s=120)
        self.session = self.client.open_session()
        self.thread = None

    def one(self):
        t0 = time.monotonic()
        try:
            self.client.close()  # a new connection each time, as a new client's would be
            resp = self.client.execute(self.session, self.sql, cloudfetch=False)
            code, state, msg = tcli.status_of(resp)
            if code not in (tcli.SUCCESS, tcli.SUCCESS_WITH_INFO):
                raise RuntimeError(f'{state} {msg[:120]}')
            op = resp[2]
            st, state, msg = self.client.wait(op, deadline_s=120)
            if st != tcli.FINISHED:
                raise RuntimeError(f'state {st} {state} {msg[:120]}')
            tcli.status_of(self.client.fetch(op, first=True))
            self.client.close_op(op)
            return time.monotonic() - t0, None
        except Exception as e:  # noqa: BLE001 - any failure is the measurement
            return time.monotonic() - t0, str(e)[:160]

    def _loop(self):
        while not self.stop_flag.is_set():
            lat, err = self.one()
            (self.errors if err else self.latencies).append(err if err else lat)
            self.peak_rss = max(self.peak_rss, rss_bytes(self.server.pid))
            self.peak_disk = max(self.peak_disk, self.server.disk())
            self.stop_flag.wait(self.every_s)

    def __enter__(self):
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join()

    def summary(self):
        if not self.latencies:
            return f'no answer ({len(self.errors)} errors: {self.errors[:1]})'
        lat = sorted(self.latencies)
        s = f'median {statistics.median(lat) * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms ({len(lat)} queries)'
        if self.errors:
            s += f', {len(self.errors)} failed: {self.errors[0]}'
        return s


ROWS = []


def row(finding, what, to_error, probe, rss=None, disk=None, note=''):
    ROWS.append((finding, what, to_error, probe.summary() if isinstance(probe, Probe) else probe,
                 f'{(rss if rss is not None else probe.peak_rss) / MiB:.0f} MiB',
                 f'{(disk if disk is not None else probe.peak_disk) / MiB:.1f} MiB', note))
    log(' | '.join(str(x) for x in ROWS[-1]))


def run_statement(client, session, sql, deadline_s=300):
    """Executes `sql` and waits: (seconds, final state or 'refused', sqlState, message)."""
    t0 = time.monotonic()
    try:
        resp = client.execute(session, sql)
    except Exception as e:  # noqa: BLE001
        return time.monotonic() - t0, 'failed', '', str(e)[:160]
    code, state, msg = tcli.status_of(resp)
    if code not in (tcli.SUCCESS, tcli.SUCCESS_WITH_INFO):
        return time.monotonic() - t0, 'refused', state, msg
    st, state, msg = client.wait(resp[2], deadline_s=deadline_s)
    client.close_op(resp[2])
    return time.monotonic() - t0, {tcli.FINISHED: 'FINISHED', tcli.ERROR: 'ERROR'}.get(st, str(st)), state, msg


# ---- 1: statements that crashed the parser and binder --------------------------------------
def finding_1(srv):
    inputs = [
        ('50,000-term + chain', 'SELECT r_regionkey' + '+1' * 50000 + ' FROM region'),
        ('6,000-term + chain', 'SELECT r_regionkey' + '+1' * 6000 + ' FROM region'),
        ('20,000-term * chain', 'SELECT r_regionkey' + '*1' * 20000 + ' FROM region'),
        ('4,000-term - chain', 'SELECT r_regionkey' + '-1' * 4000 + ' FROM region'),
        ('CASE of 29,742 WHENs', 'SELECT CASE ' + ' '.join(f'WHEN r_regionkey={i} THEN {i}' for i in range(29742)) +
         ' END FROM region'),
        ('10,000 nested parentheses', 'SELECT ' + '(' * 10000 + '1' + ')' * 10000 + ' FROM region'),
    ]
    c = srv.client(ATTACKER)
    s = c.open_session()
    with Probe(srv) as p:
        results = []
        for name, sql in inputs:
            took, st, state, msg = run_statement(c, s, sql)
            results.append(f'{name} ({len(sql) // 1024} KiB): {st} {state} in {took:.2f} s')
            log('  #1', results[-1], msg[:100])
    row(1, 'deep statements; ' + '; '.join(results), f'max {max(float(r.split(" in ")[1][:-2]) for r in results):.2f} s',
        p, note='server alive' if srv.alive() else 'SERVER DIED')


# ---- 2: planning on the RPC workers ----------------------------------------------------------
def finding_2(srv):
    # 4 KB, each chain just under the depth limit (1,000): planned, not refused.
    sql = 'SELECT r_regionkey' + '-1' * 990 + ', r_regionkey' + '+2' * 990 + ' FROM region'
    c0 = srv.client(ATTACKER)
    s = c0.open_session()
    done, states = [], []

    def one():
        c = srv.client(ATTACKER, timeout_s=300)
        took, st, state, _ = run_statement(c, s, sql)
        done.append(took)
        states.append(st if st != 'refused' else f'refused {state}')

    t0 = time.monotonic()
    with Probe(srv) as p:
        threads = [threading.Thread(target=one) for _ in range(80)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    total = time.monotonic() - t0
    counts = {k: states.count(k) for k in set(states)}
    row(2, f'80 concurrent 4 KB statements in one session: {counts}', f'all done in {total:.1f} s', p)


# ---- 3: FetchResults long-polls --------------------------------------------------------------
SLOW_JOIN = 'SELECT count(*) FROM lineitem a JOIN lineitem b ON a.l_returnflag = b.l_returnflag'


def finding_3(srv, seconds=15):
    c = srv.client(ATTACKER)
    s = c.open_session()
    resp = c.execute(s, SLOW_JOIN)
    op = resp[2]
    with Probe(srv) as base:
        time.sleep(5)
    stop = threading.Event()
    replies = []

    def loop():
        cc = srv.client(ATTACKER)
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                cc.fetch(op)
                replies.append(time.monotonic() - t0)
            except Exception:  # noqa: BLE001
                pass

    with Probe(srv) as p:
        threads = [threading.Thread(target=loop) for _ in range(100)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join()
    c.cancel(op)
    c.close_op(op)
    med = statistics.median(replies) if replies else -1
    row(3, f'100 looping FetchResults on one running join ({len(replies)} replies, median {med * 1000:.0f} ms each)',
        'n/a', p, note=f'victim with the join alone: {base.summary()}')


# ---- 4: bodies announced, not sent -----------------------------------------------------------
def hold_tls_bodies(srv, n, addresses, content_length=16 * MiB):
    ctx = ssl.create_default_context(cafile=srv.cert)
    ctx.check_hostname = False
    socks = []
    head = (f'POST {srv.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ATTACKER}\r\n'
            f'Content-Type: application/x-thrift\r\nContent-Length: {content_length}\r\n\r\n').encode()
    lock = threading.Lock()

    def opener(k):
        for i in range(k, n, 32):
            try:
                raw = socket.create_connection(('127.0.0.1', srv.port), timeout=10,
                                               source_address=(addresses[i % len(addresses)], 0))
                t = ctx.wrap_socket(raw)
                t.sendall(head + b'\x80')  # and one byte of body
                with lock:
                    socks.append(t)
            except OSError:
                pass

    threads = [threading.Thread(target=opener, args=(k,)) for k in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return socks


def fetch_all(client, session, sql):
    """Runs `sql` and downloads every chunk: (rows, bytes, seconds, error)."""
    t0 = time.monotonic()
    resp = client.execute(session, sql)
    code, state, msg = tcli.status_of(resp)
    if code not in (tcli.SUCCESS, tcli.SUCCESS_WITH_INFO):
        return 0, 0, time.monotonic() - t0, f'{state} {msg[:120]}'
    op = resp[2]
    rows = nbytes = 0
    first = True
    while True:
        page = client.fetch(op, first=first)
        first = False
        code, state, msg = tcli.status_of(page)
        if code not in (tcli.SUCCESS, tcli.SUCCESS_WITH_INFO):
            return rows, nbytes, time.monotonic() - t0, f'{state} {msg[:120]}'
        for path, _, count, _ in tcli.links_of(page):
            status, body = client.get(path)
            if status != 200:
                return rows, nbytes, time.monotonic() - t0, f'download HTTP {status}'
            rows += count
            nbytes += len(body)
        if not page.get(2, False):
            break
    client.close_op(op)
    return rows, nbytes, time.monotonic() - t0, None


def finding_4(srv):
    addrs = [f'127.0.0.{i}' for i in range(2, 6)]
    t0 = time.monotonic()
    socks = hold_tls_bodies(srv, 800, addrs)
    opened = time.monotonic() - t0
    m = srv.client(VICTIM).metrics()
    held = metric(m, 'http ', 'body_bytes')
    victim = srv.client(VICTIM, timeout_s=300)
    vs = victim.open_session()
    with Probe(srv) as p:
        rows, nbytes, took, err = fetch_all(victim, vs, 'SELECT * FROM lineitem')
        m = srv.client(VICTIM).metrics()
    refusals = metric(m, 'http ', 'body_refusals')
    for s in socks:
        s.close()
    big = f'victim SELECT * FROM lineitem: {rows} rows, {nbytes / MiB:.0f} MiB in {took:.1f} s' + (f' FAILED {err}' if err else '')
    row(4, f'{len(socks)} TLS requests announcing 16 MiB bodies (opened in {opened:.1f} s from 4 addresses)',
        'n/a (nothing reserved)', p, note=f'body bytes held {held} B (peak {metric(m, "http ", "peak_body_bytes")} B), '
        f'refusals {refusals}; {big}')


# ---- 5: the global connection cap --------------------------------------------------------------
def hold_tcp(srv, addresses, per_address, seconds, probe):
    """Holds `per_address` idle TCP connections from each address, reopening dropped ones."""
    import selectors
    sel = selectors.DefaultSelector()
    open_count = {a: 0 for a in addresses}
    reopened = 0

    def connect(a):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.bind((a, 0))
            s.connect_ex(('127.0.0.1', srv.port))
        except OSError:
            s.close()
            return False
        sel.register(s, selectors.EVENT_READ, a)
        open_count[a] += 1
        return True

    for a in addresses:
        for _ in range(per_address):
            connect(a)
    end = time.monotonic() + seconds
    peak_server = 0
    next_metrics = 0
    mc = srv.client(VICTIM)
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s, a = key.fileobj, key.data
            try:
                data = s.recv(4096)
            except OSError:
                data = b''
            if not data:  # closed by the server: reopen
                sel.unregister(s)
                s.close()
                open_count[a] -= 1
                reopened += connect(a)
        if time.monotonic() > next_metrics:
            try:
                peak_server = max(peak_server, metric(mc.metrics(), 'http ', 'connections'))
            except Exception:  # noqa: BLE001
                pass
            next_metrics = time.monotonic() + 1
    m = mc.metrics()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    sel.close()
    return reopened, peak_server, m


def finding_5(srv, seconds=20):
    m0 = srv.client(VICTIM).metrics()
    with Probe(srv) as p:
        reopened, peak, m = hold_tcp(srv, [f'127.0.0.{i}' for i in range(2, 6)], 1024, seconds, p)
    row(5, f'4 addresses x 1,024 idle TCP connections, reopened when dropped ({reopened} reopens), {seconds} s',
        'n/a', p, note=f'server held at most {peak} connections; refused '
        f'{metric(m, "http ", "refused_connections") - metric(m0, "http ", "refused_connections")}, '
        f'shed {metric(m, "http ", "shed_connections") - metric(m0, "http ", "shed_connections")}')
    m0 = m
    with Probe(srv) as p:
        reopened, peak, m = hold_tcp(srv, [f'127.0.1.{i}' for i in range(1, 21)], 256, seconds, p)

    def delta(key):
        return metric(m, 'http ', key) - metric(m0, 'http ', key)

    row('5b', f'20 addresses x 256 idle TCP connections (5,120 > the 4,096 cap), reopened ({reopened} reopens)',
        'n/a', p, note=f'server held at most {peak}; refused {delta("refused_connections")}, '
        f'shed {delta("shed_connections")}')


# ---- 6: handles of another token --------------------------------------------------------------
def finding_6(srv):
    v = srv.client(VICTIM)
    vs = v.open_session()
    resp = v.execute(vs, 'SELECT n_name FROM nation ORDER BY n_nationkey', cloudfetch=False)
    op = resp[2]
    v.wait(op)
    a = srv.client(ATTACKER)
    t0 = time.monotonic()
    got = {
        'FetchResults': tcli.status_of(a.fetch(op, first=True))[0],
        'GetOperationStatus': tcli.status_of(a.op_call('GetOperationStatus', op))[0],
        'ExecuteStatement': tcli.status_of(a.execute(vs, 'SELECT 1'))[0],
        'CancelOperation': a.cancel(op)[0],
        'CloseOperation': a.close_op(op)[0],
        'CloseSession': a.close_session(vs)[0],
    }
    took = time.monotonic() - t0
    still = tcli.status_of(v.fetch(op, first=True))[0]
    names = {0: 'SUCCESS', 3: 'ERROR', 4: 'INVALID_HANDLE'}
    row(6, 'a second token with leaked session/operation handles: ' +
        ', '.join(f'{k} {names.get(c, c)}' for k, c in got.items()), f'{took * 1000:.0f} ms for all six',
        'n/a', rss=rss_bytes(srv.pid), disk=srv.disk(),
        note=f'the owner then fetches: {names.get(still, still)}')
    v.close_op(op)


# ---- 7: operator spill on disk ---------------------------------------------------------------
SORT = 'SELECT l_comment, l_orderkey, l_linenumber, l_extendedprice FROM lineitem ORDER BY l_comment, l_orderkey'


def finding_7(quiver, scale):
    # Needs statements that spill: a small statement memory limit (stated).
    extra = ['--statement-memory-limit', '16MiB', '--spill-limit', '256MiB', '--statement-spill-limit', '8MiB']
    srv = Server(quiver, scale, extra)
    try:
        c = srv.client(ATTACKER)
        s = c.open_session()
        with Probe(srv) as p:
            took, st, state, msg = run_statement(c, s, SORT)
            after = srv.disk()
        row(7, f'spilling sort past --statement-spill-limit 8MiB ({" ".join(extra)})', f'{st} {state} in {took:.2f} s',
            p, note=f'{disk_limit_text(msg)}; {after} B on disk after')
        # One budget: served result chunks (moved to disk after their download) and a sort's
        # spill files share --spill-limit.
        srv.remove()
        extra = ['--statement-memory-limit', '16MiB', '--spill-limit', '48MiB', '--statement-spill-limit', '-1']
        srv = Server(quiver, 0.1, extra)
        c = srv.client(ATTACKER, timeout_s=300)
        s = c.open_session()
        with Probe(srv) as p:
            resp = c.execute(s, 'SELECT * FROM lineitem')
            held_op, first, nbytes = resp[2], True, 0
            while True:
                page = c.fetch(held_op, first=first)
                first = False
                for path, _, _, _ in tcli.links_of(page):
                    nbytes += len(c.get(path)[1])
                if not page.get(2, False):
                    break
            time.sleep(1)
            served_on_disk = srv.disk()
            took, st, state, msg = run_statement(c, s, SORT)
            c.close_op(held_op)
            time.sleep(0.5)
            took2, st2, _, _ = run_statement(c, s, SORT)
        row('7c', f'a result downloaded in full and left open ({nbytes / MiB:.0f} MiB, served chunks on disk), then '
            f'a spilling sort ({" ".join(extra)}, scale 0.1)', f'{st} {state} in {took:.2f} s', p,
            note=f'{served_on_disk / MiB:.1f} MiB of served chunks on disk; {disk_limit_text(msg)}; after '
            f'CloseOperation the same sort: {st2} in {took2:.2f} s')
        # Cancel while spilling: the spill directory goes at once.
        srv2_extra = ['--statement-memory-limit', '16MiB']
        srv.remove()
        srv = Server(quiver, scale, srv2_extra)
        c = srv.client(ATTACKER)
        s = c.open_session()
        resp = c.execute(s, SORT)
        op = resp[2]
        t_end = time.monotonic() + 120
        while srv.disk() == 0 and time.monotonic() < t_end:
            time.sleep(0.05)
        time.sleep(0.3)
        spilled = srv.disk()
        t0 = time.monotonic()
        c.cancel(op)
        while srv.disk() > 0 and time.monotonic() - t0 < 30:
            time.sleep(0.01)
        gone = time.monotonic() - t0
        left = srv.disk()
        # Killed while spilling: the next server removes the directory and the TPC-H data.
        resp = c.execute(s, SORT)
        t_end = time.monotonic() + 120
        while srv.disk() == 0 and time.monotonic() < t_end:
            time.sleep(0.05)
        time.sleep(0.3)
        before_kill = srv.disk()
        tpch_bytes = tree_bytes(srv.tpch_dir)
        srv.stop(signal.SIGKILL)
        dead_left = tree_bytes(srv.tmp)
        env = dict(os.environ, QUIVER_TOKEN=ATTACKER, TMPDIR=srv.tmp)
        t0 = time.monotonic()
        out = subprocess.run([quiver, 'sql', '--tpch', '0.001', 'SELECT count(*) FROM region'], env=env,
                             capture_output=True, text=True, timeout=120)
        sweep_s = time.monotonic() - t0
        lines = [ln for ln in out.stderr.splitlines() if 'removed' in ln]
        row('7b', f'cancel while spilling ({" ".join(srv2_extra)}); then SIGKILL while spilling and the next quiver '
            f'process', f'spill dir gone {gone * 1000:.0f} ms after CancelOperation', 'n/a',
            rss=rss_bytes(srv.pid) if srv.alive() else 0, disk=left,
            note=f'{spilled / MiB:.1f} MiB spilled -> {left} B after cancel; killed with {before_kill / MiB:.1f} MiB '
            f'spill + {tpch_bytes / MiB:.1f} MiB TPC-H left ({dead_left / MiB:.1f} MiB); next start ({sweep_s:.1f} s): '
            f'{" / ".join(lines)}; left after: {tree_bytes(srv.tmp)} B')
    finally:
        srv.remove()


def disk_limit_text(msg):
    at = msg.find('disk limit:')
    return msg[at:at + 200] if at >= 0 else msg[:200]


# ---- 9: a statement timeout by default -------------------------------------------------------
def finding_9(quiver, scale, default_help):
    srv = Server(quiver, scale, ['--statement-timeout-s', '2'])
    try:
        c = srv.client(ATTACKER)
        s = c.open_session()
        with Probe(srv) as p:
            took, st, state, msg = run_statement(c, s, SLOW_JOIN)
        row(9, f'runaway join, --statement-timeout-s 2 (default: {default_help})', f'{st} {state} in {took:.2f} s', p,
            note=msg[:120])
    finally:
        srv.remove()


# ---- 10: the real Node driver --------------------------------------------------------------------
def finding_10(quiver):
    script = os.path.join(ROOT, 'tests', 'interop', 'databricks_keepalive.mjs')
    t0 = time.monotonic()
    out = subprocess.run(['node', script, '--quiver', quiver], capture_output=True, text=True, timeout=900)
    last = (out.stdout.strip().splitlines() or ['(no output)'])[-1]
    row(10, 'Node @databricks/sql 2.1.0, 12 s synchronous pauses between fetches (interop.databricks-keepalive)',
        f'exit {out.returncode} in {time.monotonic() - t0:.0f} s', 'n/a', rss=0, disk=0, note=last[:200])


# ---- 11: chunks after their download ---------------------------------------------------------
def finding_11(srv, orphan_wait):
    m0 = srv.client(VICTIM).metrics()
    c = srv.client(ATTACKER, timeout_s=300)
    s = c.open_session()
    with Probe(srv) as p:
        t0 = time.monotonic()
        resp = c.execute(s, 'SELECT * FROM lineitem')
        op = resp[2]
        rows = nbytes = chunks = 0
        first, paths = True, []
        while True:
            page = c.fetch(op, first=first)
            first = False
            for path, _, count, _ in tcli.links_of(page):
                status, body = c.get(path)
                rows, nbytes, chunks = rows + count, nbytes + len(body), chunks + 1
                paths.append((path, body[:4096], len(body)))
            if not page.get(2, False):
                break
        took = time.monotonic() - t0
        time.sleep(1.0)
        m = srv.client(VICTIM).metrics()
    mem = metric(m, 'store ', 'memory_bytes')
    peak_mem = metric(m, 'store ', 'peak_memory_bytes')
    spilled = metric(m, 'store ', 'spilled_bytes')
    rss_open = rss_bytes(srv.pid)
    status, again = c.get(paths[len(paths) // 2][0])
    same = status == 200 and again[:4096] == paths[len(paths) // 2][1] and len(again) == paths[len(paths) // 2][2]
    row(11, f'SELECT * FROM lineitem downloaded in full ({rows} rows, {chunks} chunks, {nbytes / MiB:.0f} MiB, '
        f'{took:.1f} s), operation left open', f'chunks in memory {mem / MiB:.1f} MiB (peak {peak_mem / MiB:.0f} MiB)',
        p, rss=rss_open, disk=srv.disk(),
        note=f'spilled {spilled / MiB:.0f} MiB; a re-download of a served chunk: HTTP {status}, '
        f'{"same bytes" if same else "DIFFERENT BYTES"}; RSS at start {metric(m0, "allocator", "process_resident_bytes") / MiB:.0f} MiB')
    c.close_op(op)
    # Five clients that die mid-fetch: each read one page of links, then went away.
    dead = []
    for _ in range(5):
        cc = srv.client(ATTACKER)
        ss = cc.open_session()
        r = cc.execute(ss, 'SELECT * FROM lineitem')
        first, got = True, 0
        while got < 2:  # two chunks downloaded, then gone
            page = cc.fetch(r[2], first=first)
            first = False
            for path, _, _, _ in tcli.links_of(page)[:2 - got]:
                cc.get(path)
                got += 1
            if not page.get(2, False):
                break
        cc.close()
        dead.append(cc)
    time.sleep(3)
    m = srv.client(VICTIM).metrics()
    # A client that pages through every link and downloads none (still open).
    cc = srv.client(ATTACKER)
    ss = cc.open_session()
    r = cc.execute(ss, 'SELECT * FROM lineitem')
    first, links = True, 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 120:
        page = cc.fetch(r[2], first=first)
        first = False
        links += len(tcli.links_of(page))
        if not page.get(2, False):
            break
    time.sleep(1)
    m_links = srv.client(VICTIM).metrics()
    row('11c', f'a client takes all {links} links of SELECT * FROM lineitem and downloads none', 'n/a', 'n/a',
        rss=rss_bytes(srv.pid), disk=srv.disk(),
        note=f'its chunks in memory: {(metric(m_links, "store ", "memory_bytes") - metric(m, "store ", "memory_bytes")) / MiB:.0f}'
        f' MiB (the rest moved to disk by the producer); on disk {srv.disk() / MiB:.0f} MiB')
    cc.close_op(r[2])
    note = ''
    freed_s = -1
    if orphan_wait:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 200:
            m2 = srv.client(VICTIM).metrics()
            if metric(m2, 'service ', 'operations') == 0:
                freed_s = time.monotonic() - t0 + 3
                break
            time.sleep(1)
        note = (f'orphans freed {freed_s:.0f} s after the clients went (--orphan-timeout-s 120): '
                f'{metric(m2, "store ", "memory_bytes") / MiB:.1f} MiB chunks, RSS {rss_bytes(srv.pid) / MiB:.0f} MiB')
    row('11b', '5 clients die mid-fetch of SELECT * FROM lineitem', 'see note', 'n/a', rss=rss_bytes(srv.pid),
        disk=srv.disk(), note=f'{metric(m, "service ", "operations")} operations, {metric(m, "store ", "chunks")} '
        f'chunks, {metric(m, "store ", "memory_bytes") / MiB:.0f} MiB in memory 3 s after; {note}')


# ---- 12: Ctrl-C on quiver sql ------------------------------------------------------------------
def finding_12(quiver):
    script = os.path.join(ROOT, 'tests', 'cli', 'sql_interrupt_check.sh')
    out = subprocess.run(['sh', script, quiver], capture_output=True, text=True, timeout=600)
    last = (out.stdout.strip().splitlines() or ['(no output)'])[-1]
    row(12, 'SIGINT to quiver sql during a spilling sort writing -o (cli.sql-interrupt)', f'exit {out.returncode}',
        'n/a', rss=0, disk=0, note=last[:240])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quiver', default=os.path.join(ROOT, 'build', 'release', 'quiver'))
    ap.add_argument('--scale', type=float, default=1.0)
    ap.add_argument('--only', default='1,2,3,4,5,6,7,9,11,12')
    ap.add_argument('--orphan-wait', action='store_true', help='wait for the orphaned operations of #11 (120 s)')
    ap.add_argument('--node-driver', action='store_true', help='run #10 (the Node driver test)')
    a = ap.parse_args()
    only = {x.strip() for x in a.only.split(',')}
    if a.node_driver:
        only.add('10')
    quiver = os.path.abspath(a.quiver)
    help_text = subprocess.run([quiver, 'serve', '--help'], capture_output=True, text=True).stdout
    lines = help_text.splitlines()
    at = next((i for i, ln in enumerate(lines) if '--statement-timeout-s' in ln), None)
    default_timeout = '?'
    if at is not None and '(default' in lines[at + 1]:
        default_timeout = lines[at + 1][lines[at + 1].index('(default') + 1:].rstrip(')')
    log(f'quiver serve --tpch {a.scale}, default options, tokens: attacker and victim')
    srv = Server(quiver, a.scale)
    log(f'server pid {srv.pid}, port {srv.port}, RSS {rss_bytes(srv.pid) / MiB:.0f} MiB at ready')
    try:
        with Probe(srv) as idle:
            time.sleep(3)
        row(0, 'no attack (baseline)', 'n/a', idle)
        for n, fn in [('1', finding_1), ('2', finding_2), ('3', finding_3), ('4', finding_4), ('5', finding_5),
                      ('6', finding_6)]:
            if n in only:
                fn(srv)
                if not srv.alive():
                    log(f'SERVER DIED after finding {n}')
                    srv = Server(quiver, a.scale)
        if '11' in only:
            finding_11(srv, a.orphan_wait)
    finally:
        srv.remove()
    if '7' in only:
        finding_7(quiver, min(a.scale, 0.2))
    if '9' in only:
        finding_9(quiver, min(a.scale, 0.1), default_timeout)
    if '10' in only:
        finding_10(quiver)
    if '12' in only:
        finding_12(quiver)
    print('\n| # | attack | time to the error | victim one-row query | peak RSS | disk | notes |')
    print('|---|---|---|---|---|---|---|')
    for r in ROWS:
        print('| ' + ' | '.join(str(x).replace('|', '/') for x in r) + ' |')


if __name__ == '__main__':
    main()
