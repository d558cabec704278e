#!/usr/bin/env bash
# tests/objstore/rgw.sh — a one-node Ceph cluster (one mon, one BlueStore OSD
# on a sparse file, radosgw with the beast frontend over HTTPS) on 127.0.0.1,
# everything under one private directory, for the objstore tests and the
# benchmark. Needs root (or a user that may run the Ceph daemons) and the
# packages ceph-mon ceph-osd radosgw (scripts/install-deps.sh).
#
#   rgw.sh start DIR   bootstrap a new cluster in DIR (must not exist or be
#                      empty); prints "endpoint https://127.0.0.1:PORT" and
#                      writes DIR/env (AWS_* variables, QUIVER_S3_ENDPOINT,
#                      QUIVER_S3_CA). Ports: RGW_BASE_PORT (default a free
#                      range derived from $$), mon on BASE, rgw on BASE+1
#                      (HTTPS) and BASE+2 (HTTP).
#   rgw.sh stop DIR    stop every daemon started from DIR (TERM, KILL after
#                      10 s) and remove DIR.
#   rgw.sh stop-rgw DIR / start-rgw DIR   only radosgw (fault tests).
set -euo pipefail
cmd=${1:?usage: rgw.sh start|stop|stop-rgw|start-rgw DIR}
dir=${2:?usage: rgw.sh start|stop DIR}

free_base() {
  # Three consecutive free ports from a range seeded by the pid.
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + (RANDOM % 4000) * 3))
    if ! (ss -ltnH 2>/dev/null | awk '{print $4}' | grep -qE ":($p|$((p + 1))|$((p + 2)))\$"); then
      echo "$p"
      return
    fi
  done
  echo 23300
}

wait_port() {  # host port seconds
  local deadline=$((SECONDS + $3))
  while ! (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

stop_pidfile() {  # file
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
}

start_rgw() {
  radosgw -c "$dir/ceph.conf" -n client.rgw
  . "$dir/ports"
  wait_port 127.0.0.1 "$RGW_HTTPS_PORT" 60 || { echo "rgw.sh: radosgw did not listen on $RGW_HTTPS_PORT" >&2; tail -20 "$dir/log/client.rgw.log" >&2; return 1; }
}

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ -z "$(ls -A "$dir")" ] || { echo "rgw.sh: $dir is not empty" >&2; exit 1; }
  base=${RGW_BASE_PORT:-$(free_base)}
  mkdir -p "$dir"/{mon,osd,run,log}
  cat >"$dir/ports" <<P
MON_PORT=$base
RGW_HTTPS_PORT=$((base + 1))
RGW_HTTP_PORT=$((base + 2))
P
  . "$dir/ports"
  # Self-signed certificate for 127.0.0.1 and localhost.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$dir/rgw.key" -out "$dir/rgw.crt" 2>/dev/null
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat >"$dir/ceph.conf" <<C
[global]
fsid = $fsid
mon_host = v1:127.0.0.1:$MON_PORT
mon_initial_members = a
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
keyring = $dir/\$name.keyring
log_file = $dir/log/\$name.log
pid_file = $dir/run/\$name.pid
admin_socket = $dir/run/\$name.asok
run_dir = $dir/run
mon_data = $dir/mon/\$name
osd_data = $dir/osd/\$name
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
osd_crush_chooseleaf_type = 0
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
mon_max_pg_per_osd = 1000
mon_data_avail_warn = 5
mon_data_avail_crit = 1
auth_allow_insecure_global_id_reclaim = false
mon_warn_on_pool_no_redundancy = false
osd_memory_target = 1073741824
osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = 21474836480
bluestore_fsck_on_mkfs = false
ms_bind_ipv6 = false
public_addr = 127.0.0.1
debug_ms = 0
[client.rgw]
rgw_frontends = beast endpoint=127.0.0.1:$RGW_HTTP_PORT ssl_endpoint=127.0.0.1:$RGW_HTTPS_PORT ssl_certificate=$dir/rgw.crt ssl_private_key=$dir/rgw.key
rgw_gc_obj_min_wait = 10
rgw_gc_processor_period = 10
rgw_lc_debug_interval = ${RGW_LC_DEBUG_INTERVAL:-60}
rgw_dns_name = 127.0.0.1
log_file = $dir/log/client.rgw.log
C
  C="-c $dir/ceph.conf"
  ceph-authtool --create-keyring "$dir/mon..keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$dir/client.admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$dir/mon..keyring" --import-keyring "$dir/client.admin.keyring" >/dev/null
  cp "$dir/mon..keyring" "$dir/mon.a.keyring"
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$dir/monmap" >/dev/null
  ceph-mon $C --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon..keyring"
  ceph-mon $C -i a
  wait_port 127.0.0.1 "$MON_PORT" 30
  ceph $C -n client.admin auth get-or-create client.rgw mon 'allow rw' osd 'allow rwx' -o "$dir/client.rgw.keyring" >/dev/null
  uuid=$(cat /proc/sys/kernel/random/uuid)
  mkdir -p "$dir/osd/osd.0"
  ceph $C auth get-or-create osd.0 mon 'allow profile osd' osd 'allow *' mgr 'allow profile osd' -o "$dir/osd.0.keyring" >/dev/null
  cp "$dir/osd.0.keyring" "$dir/osd/osd.0/keyring"
  id=$(ceph $C osd new "$uuid" 0)
  ceph-osd $C -i "$id" --mkfs --osd-uuid "$uuid" >/dev/null 2>&1 || { echo "rgw.sh: ceph-osd --mkfs failed" >&2; tail -20 "$dir/log/osd.0.log" >&2; exit 1; }
  ceph-osd $C -i "$id"
  start_rgw
  key=QVR$(openssl rand -hex 8 | tr a-f A-F)
  secret=$(openssl rand -hex 20)
  radosgw-admin $C user create --uid=quiver --display-name=quiver --access-key="$key" --secret-key="$secret" >/dev/null
  key2=QVO$(openssl rand -hex 8 | tr a-f A-F)
  secret2=$(openssl rand -hex 20)
  radosgw-admin $C user create --uid=other --display-name=other --access-key="$key2" --secret-key="$secret2" >/dev/null
  cat >"$dir/env" <<E
export AWS_ACCESS_KEY_ID=$key
export AWS_SECRET_ACCESS_KEY=$secret
export QUIVER_OTHER_ACCESS_KEY_ID=$key2
export QUIVER_OTHER_SECRET_ACCESS_KEY=$secret2
export QUIVER_S3_ENDPOINT=https://127.0.0.1:$RGW_HTTPS_PORT
export QUIVER_S3_HTTP_ENDPOINT=http://127.0.0.1:$RGW_HTTP_PORT
export QUIVER_S3_CA=$dir/rgw.crt
E
  chmod 600 "$dir/env"
  echo "endpoint https://127.0.0.1:$RGW_HTTPS_PORT"
  ;;
stop)
  [ -d "$dir" ] || exit 0
  stop_pidfile "$dir/run/client.rgw.pid"
  stop_pidfile "$dir/run/osd.0.pid"
  stop_pidfile "$dir/run/mon.a.pid"
  rm -rf "$dir"
  ;;
stop-rgw) stop_pidfile "$dir/run/client.rgw.pid" ;;
start-rgw) start_rgw ;;
*) echo "rgw.sh: unknown command $cmd" >&2; exit 2 ;;
esac
