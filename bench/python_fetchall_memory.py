"""Memory of the Python path (issue 11 part 4): quiver.connect(...).cursor()
.fetchall_arrow() of a whole table, peak RSS increase / decoded table bytes,
for one fetch policy per process (run it once per policy for clean peaks).

    quiver gen lineitem --rows 9500000 -o li.arrow          # ~1.5 GiB decoded
    QUIVER_TOKEN=tok quiver serve --port 0 --table li=li.arrow --chunk-bytes 20971520
    for p in heap mmap-after stream-mmap; do
      PYTHONPATH=build/release/python python3 bench/python_fetchall_memory.py PORT CERT $p TABLE_BYTES
    done

TABLE_BYTES: the decoded size of the table (`quiver gen` prints "buffers N B").
Prints one line per run: rows, peak increase (MiB), ratio to the table, seconds.
"""
import resource
import sys
import time

import quiver


def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


port, cert, policy, table_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = quiver.connect(server_hostname="127.0.0.1", port=int(port), http_path="/sql/1.0/warehouses/quiver",
                      ca_cert=cert, policy=policy)
cur = conn.cursor()
base_kib = rss_kib()
t0 = time.time()
cur.execute("SELECT * FROM li")
table = cur.fetchall_arrow()
seconds = time.time() - t0
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
increase = (peak_kib - base_kib) * 1024
print(f"{policy}: rows {table.num_rows} peak_increase_mib {increase / 2**20:.1f} "
      f"table_mib {table_bytes / 2**20:.1f} ratio {increase / table_bytes:.3f} seconds {seconds:.1f}")
