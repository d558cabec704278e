"""A minimal TCLIService client for the attack measurements (bench/attack/attack_table.py).

Thrift's binary protocol (strict, as the Databricks drivers send it) written by
hand: structs are dicts {field_id: (type, value)} on the way out and
{field_id: value} on the way back (nested structs the same, lists as Python
lists). Only what the measurements call is here: sessions, statements, status,
fetch, cancel and close, over one HTTPS connection per Client (keep-alive).
"""
import http.client
import ssl
import struct

# Thrift type ids.
BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = 2, 3, 4, 6, 8, 10, 11, 12, 13, 14, 15

FINISHED, CANCELED, CLOSED, ERROR = 2, 3, 4, 5
RUNNING_STATES = (0, 1, 7)  # INITIALIZED, RUNNING, PENDING
SUCCESS, SUCCESS_WITH_INFO, STILL_EXECUTING, ERROR_STATUS, INVALID_HANDLE = 0, 1, 2, 3, 4


def _write_value(out, ttype, value):
    if ttype == BOOL:
        out += struct.pack('>b', 1 if value else 0)
    elif ttype == BYTE:
        out += struct.pack('>b', value)
    elif ttype == I16:
        out += struct.pack('>h', value)
    elif ttype == I32:
        out += struct.pack('>i', value)
    elif ttype == I64:
        out += struct.pack('>q', value)
    elif ttype == DOUBLE:
        out += struct.pack('>d', value)
    elif ttype == STRING:
        b = value.encode() if isinstance(value, str) else value
        out += struct.pack('>i', len(b)) + b
    elif ttype == STRUCT:
        _write_struct(out, value)
    elif ttype == MAP:
        ktype, vtype, items = value
        out += struct.pack('>bbi', ktype, vtype, len(items))
        for k, v in items:
            _write_value(out, ktype, k)
            _write_value(out, vtype, v)
    else:
        raise ValueError(f'type {ttype} not written here')


def _write_struct(out, fields):
    for fid in sorted(fields):
        ttype, value = fields[fid]
        out += struct.pack('>bh', ttype, fid)
        _write_value(out, ttype, value)
    out += b'\x00'


def encode_call(name, args, seqid=1):
    """A CALL message of method `name` whose one argument (field 1) is the struct `args`."""
    out = bytearray(struct.pack('>I', 0x80010001))
    n = name.encode()
    out += struct.pack('>i', len(n)) + n + struct.pack('>i', seqid)
    _write_struct(out, {1: (STRUCT, args)})
    return bytes(out)


class _Reader:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        if self.p + n > len(self.d):
            raise ValueError('truncated Thrift reply')
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def value(self, ttype):
        if ttype == BOOL:
            return self.take(1) != b'\x00'
        if ttype == BYTE:
            return struct.unpack('>b', self.take(1))[0]
        if ttype == I16:
            return struct.unpack('>h', self.take(2))[0]
        if ttype == I32:
            return struct.unpack('>i', self.take(4))[0]
        if ttype == I64:
            return struct.unpack('>q', self.take(8))[0]
        if ttype == DOUBLE:
            return struct.unpack('>d', self.take(8))[0]
        if ttype == STRING:
            return self.take(struct.unpack('>i', self.take(4))[0])
        if ttype == STRUCT:
            return self.struct()
        if ttype == MAP:
            kt, vt, n = struct.unpack('>bbi', self.take(6))
            return {self.value(kt): self.value(vt) for _ in range(n)}
        if ttype in (LIST, SET):
            et, n = struct.unpack('>bi', self.take(5))
            return [self.value(et) for _ in range(n)]
        raise ValueError(f'unknown Thrift type {ttype}')

    def struct(self):
        out = {}
        while True:
            ttype = self.take(1)[0]
            if ttype == 0:
                return out
            fid = struct.unpack('>h', self.take(2))[0]
            out[fid] = self.value(ttype)


def decode_reply(data):
    """The result struct (field 0 of the reply) of a REPLY message."""
    r = _Reader(data)
    version = struct.unpack('>I', r.take(4))[0]
    if version & 0xFFFF0000 != 0x80010000:
        raise ValueError('not a strict Thrift message')
    r.take(struct.unpack('>i', r.take(4))[0])  # name
    r.take(4)  # seqid
    if version & 0xFF == 3:
        raise ValueError(f'Thrift exception: {r.struct()}')
    return r.struct().get(0, {})


def status_of(resp):
    """(statusCode, sqlState, errorMessage) of a response's TStatus (field 1)."""
    st = resp.get(1, {})
    return st.get(1, -1), st.get(3, b'').decode(), st.get(5, b'').decode()


class Client:
    """TCLIService over one HTTPS connection (reconnects when the server closed it)."""

    def __init__(self, host, port, path, token, ca_file, timeout_s=60.0, source_address=None):
        self.host, self.port, self.path, self.token = host, port, path, token
        self.ctx = ssl.create_default_context(cafile=ca_file)
        self.ctx.check_hostname = False  # the generated certificate names 127.0.0.1, not 'localhost'
        self.timeout_s = timeout_s
        self.source_address = source_address
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout_s,
                                                source_address=self.source_address)

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None

    def call(self, name, args):
        body = encode_call(name, args)
        headers = {'Authorization': f'Bearer {self.token}', 'Content-Type': 'application/x-thrift'}
        for attempt in range(2):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request('POST', self.path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 1:
                    raise
        if r.status != 200:
            raise RuntimeError(f'{name}: HTTP {r.status}: {data[:200]!r}')
        return decode_reply(data)

    def get(self, path_and_query, headers=None):
        """GET on this connection's server (a chunk link's path); (status, bytes)."""
        if self.conn is None:
            self._connect()
        self.conn.request('GET', path_and_query, headers=headers or {})
        r = self.conn.getresponse()
        return r.status, r.read()

    def metrics(self):
        status, body = self.get('/metrics', {'Authorization': f'Bearer {self.token}'})
        return body.decode() if status == 200 else ''

    # The calls.
    def open_session(self):
        resp = self.call('OpenSession', {1: (I32, 9), 1282: (I64, 0xA507)})
        code, state, msg = status_of(resp)
        if code not in (SUCCESS, SUCCESS_WITH_INFO):
            raise RuntimeError(f'OpenSession: {state} {msg}')
        return resp[3]  # TSessionHandle as decoded

    @staticmethod
    def handle_struct(decoded):
        """A decoded THandleIdentifier-bearing handle, written back as a struct."""
        ident = decoded[1]
        out = {1: (STRUCT, {1: (STRING, ident[1]), 2: (STRING, ident[2])})}
        if 2 in decoded:  # an operation handle: type and hasResultSet
            out[2] = (I32, decoded[2])
            out[3] = (BOOL, decoded.get(3, True))
        return out

    def execute(self, session, sql, cloudfetch=True, lz4=True):
        args = {
            1: (STRUCT, self.handle_struct(session)),
            2: (STRING, sql),
            4: (BOOL, True),
            1282: (BOOL, True),
            1283: (BOOL, cloudfetch),
            1284: (BOOL, lz4),
        }
        return self.call('ExecuteStatement', args)

    def op_call(self, name, op, extra=None):
        args = {1: (STRUCT, self.handle_struct(op))}
        args.update(extra or {})
        return self.call(name, args)

    def wait(self, op, deadline_s=600.0, poll_s=0.02):
        import time
        end = time.monotonic() + deadline_s
        while True:
            resp = self.op_call('GetOperationStatus', op)
            code, state, msg = status_of(resp)
            if code not in (SUCCESS, SUCCESS_WITH_INFO):
                return ERROR, state, msg
            st = resp.get(2, -1)
            if st not in RUNNING_STATES or time.monotonic() > end:
                return st, resp.get(3, b'').decode(), resp.get(5, b'').decode()
            time.sleep(poll_s)

    def fetch(self, op, first=False, max_rows=100000, start_row=None):
        extra = {2: (I32, 4 if first else 0), 3: (I64, max_rows)}
        if start_row is not None:
            extra[1282] = (I64, start_row)
        return self.op_call('FetchResults', op, extra)

    def close_op(self, op):
        return status_of(self.op_call('CloseOperation', op))

    def cancel(self, op):
        return status_of(self.op_call('CancelOperation', op))

    def close_session(self, session):
        return status_of(self.call('CloseSession', {1: (STRUCT, self.handle_struct(session))}))


def links_of(fetch_resp):
    """The result links of a FetchResults reply: [(path, start_row, row_count, bytes_num)]."""
    rowset = fetch_resp.get(3, {})
    out = []
    for link in rowset.get(1282, []):
        url = link[1].decode()
        out.append((url[url.find('/files/'):], link[3], link[4], link[5]))
    return out
