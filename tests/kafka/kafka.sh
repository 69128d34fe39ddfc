#!/usr/bin/env bash
# A single-node KRaft Apache Kafka for tests, from jars that Maven fetches and
# caches. Everything listens on 127.0.0.1, on free ports picked at prepare time.
#
#   kafka.sh fetch              download the jars (once; a warm cache costs nothing)
#   kafka.sh prepare DIR        config + formatted storage in DIR; prints the bootstrap
#   kafka.sh start DIR          prepare if needed, start, wait until it serves; prints the bootstrap
#   kafka.sh stop DIR           SIGTERM, up to 30 s, then SIGKILL
#   kafka.sh kill DIR           SIGKILL at once
#   kafka.sh pause|resume DIR   SIGSTOP / SIGCONT
#   kafka.sh bootstrap DIR      prints 127.0.0.1:PORT
#   kafka.sh status DIR         exit 0 when running, 1 when not
#
# prepare and start take --security before DIR: the broker then also has TLS
# and SASL listeners (a DIR remembers it, as DIR/tls/). Its certificates are
# made with openssl into DIR/tls/ at prepare, its SCRAM user by Kafka's own
# storage tool, and DIR/security lists what a client needs, as NAME=VALUE:
#   SSL=127.0.0.1:P       TLS, server verified against tls/ca.pem
#   MTLS=127.0.0.1:P      TLS with a client certificate signed by tls/ca.pem required
#   SASL_SSL=127.0.0.1:P  TLS + SASL: SCRAM-SHA-512 and PLAIN
#   BADHOST=127.0.0.1:P   TLS with a certificate for wrong.invalid only
#   EXPIRED=127.0.0.1:P   TLS with an expired certificate
#   SCRAM_USER, SCRAM_PASSWORD, PLAIN_USER, PLAIN_PASSWORD
#   CA, OTHER_CA (a CA that signed nothing here), CLIENT_CERT, CLIENT_KEY,
#   EXPIRED_CLIENT_CERT, EXPIRED_CLIENT_KEY (PEM files)
# Every server certificate names IP 127.0.0.1 and DNS localhost (but BADHOST's).
# Measured: making the certificates 0.2 s; start with them 3.5 s instead of 2.4 s.
#
# Environment: KAFKA_EXTRA_PROPERTIES (lines appended to server.properties at
# every prepare and start), KAFKA_VERSION (default 3.9.1; 4.x works too), SKIFF_CACHE
# (default ~/.cache/skiff), KAFKA_START_TIMEOUT (seconds, default 90),
# KAFKA_HEAP_OPTS (default -Xmx384m -Xms128m).
# A prepared DIR remembers its version in DIR/kafka.version and keeps its ports
# and data, so a broker can be prepared now and started later, or stopped and
# restarted on the same address with the same data.
# Files in DIR: server.properties, log4j config, bootstrap, kafka.pid,
# data/ (log.dirs), logs/server.log (broker log), logs/stdout.log (JVM output).
#
# Measured on 2 cores (3.9.1 / 4.4.0): fetch with empty Maven caches 5-7 s,
# warm fetch 5 ms, prepare 0.5 s, start to serving 2.4 s, stop 0.4 s, start
# after kill 6-8 s (the controller waits out the old broker session).
set -euo pipefail

DEFAULT_VERSION=3.9.1
# shellcheck source=../lib/maven-fetch.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/maven-fetch.sh"

die() {
	echo "kafka.sh: $*" >&2
	exit 2
}

note() {
	echo "kafka.sh: $*" >&2
}

cache_dir() { # version
	echo "${SKIFF_CACHE:-${HOME:-/tmp}/.cache/skiff}/kafka-$1"
}

# The Kafka artifacts name a logging API but no binding, and which one fits
# depends on the release: 3.x logs through slf4j 1.7 with reload4j, 4.x through
# log4j2, whose core it already depends on. Asks Maven which it is, and prints
# the <dependency> for the matching binding.
binding() { # dir log
	local list core slf impl
	list=$1/deps.txt
	rm -f "$list"
	maven_pom "$1/pom.xml" kafka-broker "$ver" "$(kafka_dep)"
	maven_run "$1" "$2" "$MAVEN_DEP_PLUGIN:list" -DincludeScope=runtime -DoutputFile="$list" || return 1
	core=$(sed -n 's/.*org\.apache\.logging\.log4j:log4j-core:jar:\([^:]*\):.*/\1/p' "$list" | head -n 1)
	slf=$(sed -n 's/.*org\.slf4j:slf4j-api:jar:\([^:]*\):.*/\1/p' "$list" | head -n 1)
	[ -n "$slf" ] || slf=1.7.36
	if [ -n "$core" ]; then
		impl=log4j-slf4j-impl
		[ "${slf%%.*}" -lt 2 ] || impl=log4j-slf4j2-impl
		echo "<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>$impl</artifactId><version>$core</version></dependency>"
	else
		echo "<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>$slf</version></dependency>"
	fi
}

kafka_dep() {
	echo "<dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$ver</version></dependency>"
}

# The broker's dependencies: Kafka and its logging binding (binding).
kafka_deps() { # dir log
	local dep
	dep=$(binding "$1" "$2") || return 1
	printf '%s\n    %s\n' "$(kafka_dep)" "$dep"
}

# Prints the libs directory of a version, fetching it first when needed.
fetch() { # version
	local ver=$1 rc=0
	maven_fetch "$(cache_dir "$ver")" kafka-broker "$ver" "kafka_2.13-$ver.jar" kafka_deps || rc=$?
	[ $rc != 3 ] || die "mvn not found on PATH (scripts/install-deps.sh installs it)"
	[ $rc = 0 ] || die "fetching Kafka $ver failed (log: $(cache_dir "$ver")/fetch.log)"
}

# Kafka's Uuid text form: 16 random bytes, URL-safe base64, no padding, and
# (like Uuid.randomUuid) not starting with '-', which a CLI would take for an option.
cluster_id() {
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
		[ "${id:0:1}" = "-" ] || break
	done
	echo "$id"
}

# N (default 2) distinct free TCP ports on 127.0.0.1, space-separated. They are taken
# below the kernel's ephemeral range where it leaves room, so that no client
# connection is handed the port of a broker that is prepared but not running.
free_ports() { # [n]
	python3 - "${1:-2}" <<'EOF'
import random, socket, sys
want = int(sys.argv[1])
try:
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
socks = []
for _ in range(200):
    if len(socks) == want:
        break
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randint(10000, low - 1) if low > 11000 else 0))
        socks.append(s)
    except OSError:
        s.close()
while len(socks) < want:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

prop() { # file key
	sed -n "s/^$2=//p" "$1" | tail -n 1
}

xml_escape() {
	sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' <<<"$1"
}

# Both configurations are written and both named on the command line: which
# backend the jars bring (reload4j or log4j2) varies across releases (4.0 still
# resolves to reload4j here), and each reads only its own.
write_log_config() { # dir
	local dir=$1 f
	f=$(xml_escape "$dir/logs/server.log")
	cat >"$dir/log4j2.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="file" fileName="$f" append="true">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="warn"/>
    <Logger name="org.apache.kafka.clients" level="warn"/>
    <Root level="info"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
EOF
	cat >"$dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$dir/logs/server.log
log4j.appender.file.Append=true
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
EOF
}

write_server_properties() { # dir port cport
	local dir=$1 port=$2 cport=$3
	cat >"$dir/server.properties" <<EOF
# Generated by skiff tests/kafka/kafka.sh: a single-node KRaft test broker.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$dir/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
# A broker restarted after SIGKILL must wait out its old session before it
# registers again, which argues for a short session; but on a loaded 2-core
# CI machine (load 20-30) a 4 s session made the controller fence its own
# broker three times in three minutes, each time taking every partition's
# leader away for ~2 s ("Not leader" in unrelated tests). Kafka's default,
# 9 s, with 1 s heartbeats: nine missed beats before a fence.
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=9000
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
# Small disk and heap: 16 MiB segments, a day or 256 MiB per partition,
# and a cleaner (the offsets topic is compacted) with a small dedupe buffer.
log.segment.bytes=16777216
log.retention.hours=24
log.retention.bytes=268435456
log.retention.check.interval.ms=60000
log.cleaner.dedupe.buffer.size=16777216
log.cleaner.threads=1
EOF
}

# --- the TLS and SASL listeners (--security) ---------------------------------

SEC_LISTENERS="SSL MTLS SASL_SSL BADHOST EXPIRED"

# Signs a certificate for CN with the test CA into tls/NAME.pem and
# tls/NAME.key (PKCS#8, unencrypted), and a broker keystore tls/NAME.keystore.pem
# (key then chain, Kafka's PEM keystore). days -1 makes it expired: its
# notAfter is a day before its notBefore, which is now.
sign_cert() { # tls name cn days san
	local tls=$1 name=$2 cn=$3 days=$4 san=$5
	openssl req -newkey rsa:2048 -nodes -keyout "$tls/$name.key" -out "$tls/$name.csr" \
		-subj "/CN=$cn" 2>/dev/null
	printf '%s\n' "$san" >"$tls/$name.ext"
	openssl x509 -req -in "$tls/$name.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
		-CAcreateserial -days "$days" -extfile "$tls/$name.ext" -out "$tls/$name.pem" 2>/dev/null
	cat "$tls/$name.key" "$tls/$name.pem" "$tls/ca.pem" >"$tls/$name.keystore.pem"
	rm -f "$tls/$name.csr" "$tls/$name.ext"
}

make_certs() { # dir
	local tls=$1/tls.tmp ip='subjectAltName=IP:127.0.0.1,DNS:localhost'
	command -v openssl >/dev/null || die "openssl not found on PATH"
	rm -rf "$tls"
	mkdir -p "$tls"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/ca.key" -out "$tls/ca.pem" \
		-subj "/CN=skiff test CA" -days 3650 2>/dev/null
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/other-ca.key" \
		-out "$tls/other-ca.pem" -subj "/CN=skiff unknown CA" -days 3650 2>/dev/null
	sign_cert "$tls" server localhost 3650 "$ip"
	sign_cert "$tls" badhost wrong.invalid 3650 'subjectAltName=DNS:wrong.invalid'
	sign_cert "$tls" expired localhost -1 "$ip"
	sign_cert "$tls" client skiff-device-1 3650 'extendedKeyUsage=clientAuth'
	sign_cert "$tls" client-expired skiff-device-2 -1 'extendedKeyUsage=clientAuth'
	mv "$tls" "$1/tls"
}

# Writes DIR/security (see the top of this file) for the listener ports, keeping
# the passwords of an earlier one.
write_security() { # dir ports...
	local dir=$1 f=$1/security scram plain
	shift
	scram=$(prop "$f" SCRAM_PASSWORD 2>/dev/null || true)
	plain=$(prop "$f" PLAIN_PASSWORD 2>/dev/null || true)
	[ -n "$scram" ] || scram=scram-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
	[ -n "$plain" ] || plain=plain-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
	{
		for l in $SEC_LISTENERS; do
			echo "$l=127.0.0.1:$1"
			shift
		done
		echo "SCRAM_USER=alice"
		echo "SCRAM_PASSWORD=$scram"
		echo "PLAIN_USER=bob"
		echo "PLAIN_PASSWORD=$plain"
		echo "CA=$dir/tls/ca.pem"
		echo "OTHER_CA=$dir/tls/other-ca.pem"
		echo "CLIENT_CERT=$dir/tls/client.pem"
		echo "CLIENT_KEY=$dir/tls/client.key"
		echo "EXPIRED_CLIENT_CERT=$dir/tls/client-expired.pem"
		echo "EXPIRED_CLIENT_KEY=$dir/tls/client-expired.key"
	} >"$f.tmp"
	mv "$f.tmp" "$f"
}

# Rewrites the listener lines of server.properties for DIR/security and appends
# each listener's TLS and SASL settings.
append_security() { # dir port cport
	local dir=$1 port=$2 cport=$3 f=$1/server.properties l lower ks list adv map
	list="PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport"
	adv="PLAINTEXT://127.0.0.1:$port"
	map="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	for l in $SEC_LISTENERS; do
		list="$list,$l://$(prop "$dir/security" "$l")"
		adv="$adv,$l://$(prop "$dir/security" "$l")"
		case $l in
		SASL_SSL) map="$map,$l:SASL_SSL" ;;
		*) map="$map,$l:SSL" ;;
		esac
	done
	sed -i -e "s|^listeners=.*|listeners=$list|" -e "s|^advertised.listeners=.*|advertised.listeners=$adv|" \
		-e "s|^listener.security.protocol.map=.*|listener.security.protocol.map=$map|" "$f"
	{
		echo "# --security: TLS and SASL listeners (see kafka.sh)"
		echo "sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN"
		echo "listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN"
		echo "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
		echo "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$(prop "$dir/security" PLAIN_USER)=\"$(prop "$dir/security" PLAIN_PASSWORD)\";"
		for l in $SEC_LISTENERS; do
			lower=$(tr 'A-Z' 'a-z' <<<"$l")
			case $l in
			BADHOST) ks=badhost ;;
			EXPIRED) ks=expired ;;
			*) ks=server ;;
			esac
			echo "listener.name.$lower.ssl.keystore.type=PEM"
			echo "listener.name.$lower.ssl.keystore.location=$dir/tls/$ks.keystore.pem"
		done
		echo "listener.name.mtls.ssl.client.auth=required"
		echo "listener.name.mtls.ssl.truststore.type=PEM"
		echo "listener.name.mtls.ssl.truststore.location=$dir/tls/ca.pem"
	} >>"$f"
}

# With --security: certificates (once), ports (kept), DIR/security and the
# listeners in server.properties. Prints the storage tool's --add-scram
# arguments for a format.
prepare_security() { # dir port cport
	local dir=$1 ports l
	[ -s "$dir/tls/ca.pem" ] || make_certs "$dir"
	ports=""
	if [ -s "$dir/security" ]; then
		for l in $SEC_LISTENERS; do
			ports="$ports $(prop "$dir/security" "$l" | sed 's/.*://')"
		done
	fi
	# Fresh ports must differ from the PLAINTEXT and controller ones (free now too).
	while [ "$(wc -w <<<"$ports")" -ne 5 ] || grep -qwE "$2|$3" <<<"$ports"; do
		ports=$(free_ports 5)
	done
	# shellcheck disable=SC2086
	write_security "$dir" $ports
	append_security "$dir" "$2" "$3"
}

prepared() { # dir
	[ -s "$1/bootstrap" ] && [ -s "$1/server.properties" ] && [ -s "$1/kafka.version" ] &&
		[ -e "$1/data/meta.properties" ]
}

# Sets the array JAVA to the command line of a JVM for DIR; the caller appends
# the main class and its arguments.
java_cmd() { # dir libs
	local heap
	read -r -a heap <<<"${KAFKA_HEAP_OPTS:--Xmx384m -Xms128m}"
	# C1 only and the serial collector: a test broker on 2 cores wants a quick
	# start and a small footprint more than peak throughput.
	JAVA=(java "${heap[@]}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1
		-Djava.awt.headless=true -Djava.net.preferIPv4Stack=true
		"-Dkafka.logs.dir=$1/logs" "-Dlog4j.configuration=file:$1/log4j.properties"
		"-Dlog4j2.configurationFile=$1/log4j2.xml" -cp "$2/*")
}

prepare() { # dir
	local dir=$1 ver libs port cport ports scram
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd -P)
	case $dir in
	*\\* | *$'\n'*) die "DIR must not contain a backslash or newline: $dir" ;;
	esac
	# A prepared DIR keeps its version, ports and data; its config files are
	# written anew, so changes to this script reach old DIRs too.
	ver=$(cat "$dir/kafka.version" 2>/dev/null || echo "${KAFKA_VERSION:-$DEFAULT_VERSION}")
	libs=$(fetch "$ver") || exit 1 # its message said why; set -e does not reach a caller in a condition
	if [ -s "$dir/server.properties" ]; then
		port=$(prop "$dir/server.properties" listeners | sed -n 's/^PLAINTEXT:\/\/127\.0\.0\.1:\([0-9]*\),.*/\1/p')
		cport=$(prop "$dir/server.properties" controller.quorum.voters | sed -n 's/.*:\([0-9]*\)$/\1/p')
	fi
	if [ -z "${port:-}" ] || [ -z "${cport:-}" ]; then
		ports=$(free_ports)
		port=${ports% *}
		cport=${ports#* }
	fi
	# A DIR prepared with --security keeps its listeners.
	[ ! -d "$dir/tls" ] || SECURITY=1
	mkdir -p "$dir/data" "$dir/logs"
	echo "$ver" >"$dir/kafka.version"
	write_server_properties "$dir" "$port" "$cport"
	write_log_config "$dir"
	scram=()
	if [ -n "${SECURITY:-}" ]; then
		prepare_security "$dir" "$port" "$cport"
		scram=(--add-scram "SCRAM-SHA-512=[name=$(prop "$dir/security" SCRAM_USER),password=$(prop "$dir/security" SCRAM_PASSWORD)]")
	fi
	# Lines a test adds (a later key wins in a .properties file): e.g. a
	# listener advertised on a proxy's port (test_bandwidth.py).
	if [ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]; then
		printf '# KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$dir/server.properties"
	fi
	if [ ! -e "$dir/data/meta.properties" ]; then
		java_cmd "$dir" "$libs"
		if ! "${JAVA[@]}" kafka.tools.StorageTool format -t "$(cluster_id)" "${scram[@]}" \
			-c "$dir/server.properties" </dev/null >"$dir/logs/format.log" 2>&1; then
			cat "$dir/logs/format.log" >&2
			die "formatting the storage in $dir/data failed"
		fi
	fi
	echo "127.0.0.1:$port" >"$dir/bootstrap.tmp"
	mv "$dir/bootstrap.tmp" "$dir/bootstrap"
	echo "$dir"
}

# The pid of the broker of DIR when it runs (also when stopped by SIGSTOP).
running_pid() { # dir
	local pid state
	pid=$(cat "$1/kafka.pid" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[ -r "/proc/$pid/cmdline" ] || return 1
	# Guard against a recycled pid: it must be a broker of this DIR.
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$1/server.properties" || return 1
	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null) || return 1
	[ "$state" != Z ] && [ "$state" != X ] || return 1
	echo "$pid"
}

# Serving means: metadata answers, and lists broker 1.
serving() { # bootstrap
	kcat -L -b "$1" -m 2 -X socket.timeout.ms=2000 2>/dev/null | grep -q "broker 1 at"
}

start() { # dir
	local dir ver libs bootstrap pid timeout t0
	dir=$(prepare "$1")
	bootstrap=$(cat "$dir/bootstrap")
	if pid=$(running_pid "$dir"); then
		echo "$bootstrap"
		return 0
	fi
	command -v java >/dev/null || die "java not found on PATH (scripts/install-deps.sh installs it)"
	command -v kcat >/dev/null || die "kcat not found on PATH (scripts/install-deps.sh installs it)"
	ver=$(cat "$dir/kafka.version")
	libs=$(fetch "$ver") || exit 1 # its message said why; set -e does not reach a caller in a condition
	timeout=${KAFKA_START_TIMEOUT:-90}
	t0=$SECONDS
	echo "--- start $(date '+%F %T') Kafka $ver" >>"$dir/logs/stdout.log"
	java_cmd "$dir" "$libs"
	"${JAVA[@]}" kafka.Kafka "$dir/server.properties" </dev/null >>"$dir/logs/stdout.log" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/kafka.pid"
	while ! serving "$bootstrap"; do
		if ! running_pid "$dir" >/dev/null; then
			tail -n 40 "$dir/logs/server.log" "$dir/logs/stdout.log" >&2 2>/dev/null || true
			die "broker in $dir exited during start"
		fi
		if [ $((SECONDS - t0)) -ge "$timeout" ]; then
			tail -n 40 "$dir/logs/server.log" "$dir/logs/stdout.log" >&2 2>/dev/null || true
			kill -KILL "$pid" 2>/dev/null || true
			die "broker in $dir not serving $bootstrap after ${timeout}s (killed)"
		fi
		sleep 0.3
	done
	note "Kafka $ver serving on $bootstrap (pid $pid, started in $((SECONDS - t0))s)"
	echo "$bootstrap"
}

wait_gone() { # dir seconds
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		running_pid "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

stop() { # dir
	local pid
	pid=$(running_pid "$1") || return 0
	kill -CONT "$pid" 2>/dev/null || true # a paused JVM cannot run its shutdown hooks
	kill -TERM "$pid" 2>/dev/null || true
	if ! wait_gone "$1" 30; then
		note "broker pid $pid ignored SIGTERM for 30 s, sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		wait_gone "$1" 10 || die "broker pid $pid survived SIGKILL"
	fi
}

killnow() { # dir
	local pid
	pid=$(running_pid "$1") || return 0
	kill -KILL "$pid" 2>/dev/null || true
	wait_gone "$1" 10 || die "broker pid $pid survived SIGKILL"
}

signal() { # dir SIG
	local pid
	pid=$(running_pid "$1") || die "no broker running in $1"
	kill "-$2" "$pid"
}

status() { # dir
	local pid
	if ! prepared "$1"; then
		echo "not prepared"
		return 1
	fi
	if pid=$(running_pid "$1"); then
		echo "running pid $pid version $(cat "$1/kafka.version") bootstrap $(cat "$1/bootstrap")"
		return 0
	fi
	echo "stopped version $(cat "$1/kafka.version") bootstrap $(cat "$1/bootstrap")"
	return 1
}

absdir() { # dir (must exist)
	[ -d "$1" ] || die "no such directory: $1"
	(cd "$1" && pwd -P)
}

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

main() {
	[ $# -ge 1 ] || usage
	local cmd=$1 dir=${2:-}
	if [ "$dir" = --security ]; then
		case $cmd in prepare | start) ;; *) usage ;; esac
		SECURITY=1
		dir=${3:-}
	fi
	case $cmd in
	fetch) fetch "${KAFKA_VERSION:-$DEFAULT_VERSION}" >/dev/null ;;
	prepare | start | stop | kill | pause | resume | bootstrap | status)
		[ -n "$dir" ] || usage
		case $cmd in
		prepare) dir=$(prepare "$dir") && cat "$dir/bootstrap" ;;
		start) start "$dir" ;;
		stop) stop "$(absdir "$dir")" ;;
		kill) killnow "$(absdir "$dir")" ;;
		pause) signal "$(absdir "$dir")" STOP ;;
		resume) signal "$(absdir "$dir")" CONT ;;
		bootstrap)
			dir=$(absdir "$dir")
			[ -s "$dir/bootstrap" ] || die "$dir is not prepared"
			cat "$dir/bootstrap"
			;;
		status) status "$(absdir "$dir")" ;;
		esac
		;;
	-h | --help | help) usage ;;
	*) usage ;;
	esac
}

main "$@"
