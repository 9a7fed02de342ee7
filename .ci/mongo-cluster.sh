#!/usr/bin/env bash
# Starts a MongoDB deployment in Docker (official `mongo` images) for the test suite, and
# prints its connection string on standard output (everything else goes to standard error).
#
#   .ci/mongo-cluster.sh replset 7.0   a one-member replica set (rs0) on localhost:27017
#   .ci/mongo-cluster.sh sharded 8.0   a sharded cluster: a config server replica set, two shard
#                                      replica sets (one member each) and a mongos on
#                                      localhost:27017
#   .ci/mongo-cluster.sh logs          the last lines of every container's log
#   .ci/mongo-cluster.sh stop          removes the containers and their network
#
# Then, for example:
#   export MONGODB_URI="$(.ci/mongo-cluster.sh sharded 8.0)" ODM_TEST_SHARDED=1
#   cargo xtask suite
#
# The members reach each other by container name on a network of their own; only port 27017
# (the replica set's member, or the mongos) is published on the host. The replica set's member
# is named localhost:27017 in its configuration, so that a client on the host that discovers
# the set reaches it through the published port.
set -euo pipefail

NETWORK=odm-mongo
PREFIX=odm-mongo-
PORT=27017

log() { echo "mongo-cluster: $*" >&2; }

# Runs a mongosh script against a container's server; prints what it prints.
shell() {
    local name=$1 port=$2 script=$3
    docker exec "$PREFIX$name" mongosh --quiet --port "$port" --eval "$script"
}

# Waits until `expr` (JavaScript, run on `name` at `port`) prints `true`, 60 s at most;
# otherwise says that `name` did not `what` and shows its last log lines.
wait_for() {
    local name=$1 port=$2 expr=$3 what=$4
    for _ in $(seq 60); do
        if shell "$name" "$port" "$expr" 2>/dev/null | grep -qx true; then
            return 0
        fi
        sleep 1
    done
    log "$name did not $what"
    docker logs --tail 50 "$PREFIX$name" >&2 || true
    return 1
}

# Waits until a server answers a ping.
wait_ping() {
    wait_for "$1" "$2" 'db.runCommand({ ping: 1 }).ok == 1' "answer on port $2"
}

# Waits until a replica set member is its set's primary.
wait_primary() {
    wait_for "$1" "$2" 'db.hello().isWritablePrimary' "become primary"
}

# Starts `mongod` in a container with the given arguments; `publish` maps port 27017.
start_mongod() {
    local name=$1 version=$2 publish=$3
    shift 3
    local ports=()
    if [ "$publish" = publish ]; then
        ports=(-p "127.0.0.1:$PORT:$PORT")
    fi
    log "starting $name (mongo:$version mongod $*)"
    docker run -d --name "$PREFIX$name" --hostname "$name" --network "$NETWORK" \
        "${ports[@]}" "mongo:$version" mongod --bind_ip_all "$@" >/dev/null
}

# Starts a one-member replica set `set` in the container `name`, listening on `port`, whose
# member is known to the set as `host`.
replica_set() {
    local name=$1 version=$2 set=$3 port=$4 host=$5 publish=$6
    shift 6
    start_mongod "$name" "$version" "$publish" --replSet "$set" --port "$port" "$@"
    wait_ping "$name" "$port"
    shell "$name" "$port" \
        "rs.initiate({ _id: '$set', members: [{ _id: 0, host: '$host' }] })" >/dev/null
    wait_primary "$name" "$port"
}

stop() {
    local ids
    ids=$(docker ps -aq --filter "name=^$PREFIX")
    if [ -n "$ids" ]; then
        # shellcheck disable=SC2086 # one id per word
        docker rm -f $ids >/dev/null
    fi
    docker network rm "$NETWORK" >/dev/null 2>&1 || true
}

start_network() {
    stop
    docker network create "$NETWORK" >/dev/null
}

replset() {
    local version=$1
    start_network
    replica_set rs "$version" rs0 "$PORT" "localhost:$PORT" publish
    log "replica set rs0 (MongoDB $version) ready"
    echo "mongodb://localhost:$PORT/?replicaSet=rs0"
}

sharded() {
    local version=$1
    start_network
    replica_set cfg "$version" cfg 27019 cfg:27019 no --configsvr
    replica_set shard1 "$version" shard1 27018 shard1:27018 no --shardsvr
    replica_set shard2 "$version" shard2 27018 shard2:27018 no --shardsvr
    log "starting mongos"
    docker run -d --name "${PREFIX}mongos" --hostname mongos --network "$NETWORK" \
        -p "127.0.0.1:$PORT:$PORT" "mongo:$version" \
        mongos --bind_ip_all --port "$PORT" --configdb cfg/cfg:27019 >/dev/null
    wait_ping mongos "$PORT"
    shell mongos "$PORT" "sh.addShard('shard1/shard1:27018'); sh.addShard('shard2/shard2:27018')" \
        >/dev/null
    local shards
    shards=$(shell mongos "$PORT" 'db.adminCommand({ listShards: 1 }).shards.length')
    if [ "$shards" != 2 ]; then
        log "the cluster has $shards shards, not 2"
        return 1
    fi
    log "sharded cluster (MongoDB $version, 2 shards) ready"
    echo "mongodb://localhost:$PORT/"
}

logs() {
    local name
    for name in $(docker ps -a --filter "name=^$PREFIX" --format '{{.Names}}'); do
        echo "== $name" >&2
        docker logs --tail 100 "$name" >&2 || true
    done
}

case "${1:-}" in
replset | sharded)
    if [ -z "${2:-}" ]; then
        log "usage: $0 $1 <version, e.g. 7.0>"
        exit 2
    fi
    "$1" "$2"
    ;;
logs) logs ;;
stop) stop ;;
*)
    log "usage: $0 replset <version> | sharded <version> | logs | stop"
    exit 2
    ;;
esac
