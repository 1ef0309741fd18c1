#!/usr/bin/env bash
# Benchmarks (numbers go to README.md):
#   scripts/bench/run.sh import              import time of the 601-entry synthetic base (fresh database)
#   scripts/bench/run.sh retrieval DB        retrieval latency per mode on DB (e.g. pv_kb_eval after eval_demo.sh)
#   scripts/bench/run.sh scale [ENTRIES]     retrieval latency on a synthetic base of ENTRIES entries (20000: ~150,000
#                                            chunks; 400: ~3,000), random 384-dim vectors: latency does not depend
#                                            on their meaning
#   scripts/bench/run.sh embed [OPTIONS]     batched vs one-per-request embedding through the stand-in (client level;
#                                            options: see bench_embed.py)
#   scripts/bench/run.sh reembed DB          the same through the cron's code on DB (e.g. pv_kb_bench_import), rolled back
#   scripts/bench/run.sh pipeline DB         agent overhead beyond the model calls on the demo gold set
#   scripts/bench/run.sh conflict-bases [--words]  conflict findings on the blind test bases C … I against their
#                                            ground truth (pure Python; near matches with the e5 vectors)
#   scripts/bench/run.sh health [DB]         health check of the whole base, five runs, rolled back (default: 601 synthetic
#                                            + demo entries with random vectors, as scale 601 builds them);
#                                            BENCH_GAP_QUESTIONS=20000 logs that many gap questions first, BENCH_EMBED=hash
#                                            embeds with the stand-in's hash embedder instead of e5
#   scripts/bench/run.sh tune DB             fusion recipes and full-text scoring cross-validated on the pooled tuning
#                                            parts of the demo gold set and goldset_abstimmung.yaml, reported on the
#                                            test part and on data/demo_kb/goldset_praxis.yaml (DB with e5 embeddings,
#                                            ~3 min; BENCH_GOLDSET / BENCH_HELDOUT override, BENCH_CHOOSE_ONLY=1 stops
#                                            before the held-out reports)
#   scripts/bench/run.sh ceiling DB          learning to rank and dense feedback cross-validated on the same tuning
#                                            pool; BENCH_CEILING=1 adds the ceiling (weights fitted on the held-out
#                                            praxis set itself: an upper bound, never a result; ~5 min)
#   scripts/bench/run.sh load [USERS]        USERS (20) ask at once while the stand-in streams slowly (first token
#                                            1.5 s, 30 ms per token): Odoo with --workers 4 behind nginx with Odoo's
#                                            documented rules only, the same straight to its HTTP port, and threaded
#                                            (BENCH_LOAD_MODES picks); completed, errors, first text, total, peak DB
#                                            connections, p95 of a backend request made meanwhile, how the answers
#                                            were served
#   scripts/bench/run.sh fact-answers [--distractors] [DB]
#                                            end-to-end latency of answers from the facts and where it goes (agent,
#                                            stand-in e5; default: a fresh database with the demo base, --distractors:
#                                            with the 601 synthetic entries as well; the questions rolled back)
#   scripts/bench/run.sh fact-first URL [DB]   facts before the first token of a real chat model (default DB:
#                                       pv_kb_bakeoff of scripts/bakeoff_demo.sh)
#   scripts/bench/run.sh facts               fact extraction, comparison and lookup speed (pure Python; demo and 601 synthetic)
#   scripts/bench/run.sh hostile             hostile batches (ZIPs under 1 MB: pathological Markdown, many entries, alias
#                                            bombs) checked and applied on a fresh database with the demo base, rolled
#                                            back: time and peak memory per batch (docs/measurements.md)
#   scripts/bench/run.sh pii [OPTIONS]       personal-data gate: precision/recall per detector on data/pii_eval.yaml,
#                                            median time per question (pure Python, no Odoo; options: bench_pii.py)
#   scripts/bench/run.sh pii-odoo [DB]       the gate's time per question inside Odoo with 2,000 contacts (rolled back;
#                                            default DB: a fresh pv_kb_bench_pii)
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
if [[ ${1:-} == pii ]]; then shift; exec "$PY" "$REPO/scripts/bench/bench_pii.py" "$@"; fi
if [[ ${1:-} == facts ]]; then shift; exec "$PY" "$REPO/scripts/bench/bench_facts.py" "$@"; fi
ensure_odoo || die "No Odoo under $ODOO_PATH"
ensure_all >/dev/null
what=${1:-}; shift || true
shell() { odoo_bin shell -c "$ODOO_CONF" -d "$1" --log-level=warn --no-http < "$2"; }
fresh_db() {
    psql_super -d postgres -c "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
    odoo_bin -c "$ODOO_CONF" -d "$1" -i pv_kb --stop-after-init --logfile="$LOGDIR/bench-install.log"
}
# a base of ENTRIES synthetic entries + the demo KB with random 384-dim vectors (kept; rebuilt when incomplete)
scale_db() {
    entries=$1; db=pv_kb_bench_scale_$entries
    syn=$PV_KB_HOME/synthetic-$entries
    [[ -f $syn/wissensbasis/kb.json ]] || "$PY" "$REPO/scripts/gen_synthetic_kb.py" "$syn" --entries "$entries" >/dev/null
    # complete only once the last step (the model parameter) is written: a run that stopped halfway rebuilds
    if [[ -z $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'") ]] || [[ -z $(psql_super \
            -d "$db" -c "SELECT 1 FROM ir_config_parameter WHERE key='pv_kb.embedding_model' AND value='random-384'") ]]; then
        fresh_db $db
        pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d $db --log-level=warn | sed -n 3,4p
        # the import's zip/folder guard caps a batch at 5000 files: load the big base in slices
        "$PY" "$REPO/scripts/bench/split_kb.py" "$syn/wissensbasis" "$PV_KB_HOME/slices-$entries" 4000
        for slice in "$PV_KB_HOME/slices-$entries"/*/; do
            pv_kb_cmd import "$slice" -d $db --log-level=warn | sed -n 4p
        done
        psql_super -d $db <<SQL
DROP INDEX IF EXISTS pv_kb_chunk_embedding_hnsw_idx;
DROP INDEX IF EXISTS pv_kb_chunk_card_hnsw_idx;
ALTER TABLE pv_kb_chunk DROP COLUMN embedding;
ALTER TABLE pv_kb_chunk ADD COLUMN embedding vector(384);
ALTER TABLE pv_kb_chunk ALTER COLUMN embedding SET STORAGE PLAIN;
UPDATE pv_kb_chunk SET embedding = (SELECT array_agg(random() - 0.5)::vector(384) FROM generate_series(1, 384) WHERE id > 0),
       embedding_model = 'random-384', embedded_hash = content_hash;
SET maintenance_work_mem = '1GB';
-- the options of lib/kb/embed_job.py (HNSW_M, HNSW_EF_CONSTRUCTION), as the addon builds them
CREATE INDEX pv_kb_chunk_embedding_hnsw_idx ON pv_kb_chunk USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200);
CREATE INDEX pv_kb_chunk_card_hnsw_idx ON pv_kb_chunk USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200) WHERE section_key = 'card';
VACUUM ANALYZE pv_kb_chunk;
SQL
        psql_super -d $db -c "INSERT INTO ir_config_parameter (key, value, create_date, write_date) VALUES ('pv_kb.embedding_model', 'random-384', now(), now()) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    fi
}
case $what in
    import)
        db=pv_kb_bench_import; fresh_db $db
        syn=$PV_KB_HOME/synthetic-601
        [[ -f $syn/wissensbasis/kb.json ]] || "$PY" "$REPO/scripts/gen_synthetic_kb.py" "$syn" --entries 601 >/dev/null
        TIMEFORMAT="wall %R s (odoo-bin start included)"
        time pv_kb_cmd import "$syn/wissensbasis" -d $db --log-level=warn | head -4
        psql_super -d $db -c "SELECT 'import service: ' || round(duration::numeric, 2) || ' s for ' || count_new || ' entries, '
                              || (SELECT count(*) FROM pv_kb_chunk) || ' chunks' FROM pv_kb_batch"
        # unchanged re-import
        pv_kb_cmd import "$syn/wissensbasis" -d $db --log-level=warn | sed -n 3,4p
        psql_super -d $db -c "SELECT 're-import unchanged: ' || round(duration::numeric, 2) || ' s' FROM pv_kb_batch ORDER BY id DESC LIMIT 1"
        ;;
    retrieval|tune|ceiling)
        start_standin --embed-model multilingual-e5-small=e5 --overhead-ms 0
        trap 'kill $STANDIN_PID 2>/dev/null' EXIT
        script=$(case $what in tune) echo tune_fusion.py ;; ceiling) echo signal_ceiling.py ;;
                 *) echo bench_retrieval.py ;; esac)
        STANDIN_URL=$STANDIN_URL BENCH_HELDOUT=${BENCH_HELDOUT-$REPO/data/demo_kb/goldset_praxis.yaml} \
            shell "${1:?database}" "$REPO/scripts/bench/$script" ;;
    scale)
        scale_db "${1:-20000}"
        BENCH_RANDOM_VECTORS=1 shell $db "$REPO/scripts/bench/bench_retrieval.py" ;;
    embed)
        "$PY" "$REPO/scripts/bench/bench_embed.py" "$@" ;;
    reembed)
        start_standin --embed-model bench-hash=hash
        trap 'kill $STANDIN_PID 2>/dev/null' EXIT
        STANDIN_URL=$STANDIN_URL shell "${1:?database}" "$REPO/scripts/bench/bench_reembed.py" ;;
    conflict-bases)
        "$PY" "$REPO/scripts/bench/bench_conflict_bases.py" "$@" ;;
    health)
        # without DB: the 601-entry synthetic base + the demo KB with random vectors (timing does not depend
        # on their meaning); with DB, e.g. pv_kb_eval (e5 vectors), the findings are meaningful as well
        if [[ -z ${1:-} ]]; then scale_db 601; else db=$1; fi
        shell "$db" "$REPO/scripts/bench/bench_health.py" ;;
    pipeline)
        shell "${1:?database}" "$REPO/scripts/bench/bench_pipeline.py" ;;
    fact-answers)
        distractors=
        if [[ ${1:-} == --distractors ]]; then
            shift; distractors=$PV_KB_HOME/synthetic-601
            # the 601 entries of the demo evaluation (seed 7, prefix syn, as TestDemoEval generates them)
            [[ -f $distractors/wissensbasis/kb.json ]] || "$PY" "$REPO/scripts/gen_synthetic_kb.py" "$distractors" \
                --entries 601 >/dev/null
            distractors=$distractors/wissensbasis
        fi
        db=${1:-pv_kb_bench_facts${distractors:+_601}}
        # a named database is reused (its base is committed by the first run), created when missing
        if [[ -z ${1:-} || -z $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'") ]]; then
            fresh_db $db
        fi
        BENCH_DISTRACTORS=$distractors shell $db "$REPO/scripts/bench/bench_fact_answers.py" ;;
    hostile)
        db=pv_kb_bench_hostile; fresh_db $db
        pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d $db --log-level=warn | sed -n 3,4p
        shell $db "$REPO/scripts/bench/bench_hostile.py" ;;
    pii-odoo)
        db=${1:-pv_kb_bench_pii}
        [[ -n ${1:-} ]] || fresh_db $db
        shell $db "$REPO/scripts/bench/bench_pii_odoo.py" ;;
    fact-first)
        # a real chat model behind an Ollama API (scripts/local_model.sh); the database of scripts/bakeoff_demo.sh
        BENCH_URL=${1:?URL of the Ollama API} shell "${2:-pv_kb_bakeoff}" "$REPO/scripts/bench/bench_fact_first.py" ;;
    load)
        users=${1:-20}; db=pv_kb_bench_load
        if [[ -z $(psql_super -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$db'") ]] || [[ -z $(psql_super \
                -d "$db" -c "SELECT 1 FROM res_users WHERE login='pv_kb_load_probe'") ]]; then
            fresh_db $db
            pv_kb_cmd import "$REPO/data/demo_kb/wissensbasis" -d $db --log-level=warn | sed -n 3,4p
        fi
        start_standin --embed-model hash-embed=hash --overhead-ms 0
        pids=()
        trap 'kill $STANDIN_PID "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
        curl -fsS -X POST "$STANDIN_URL/_standin/control" \
             -d '{"action": "set_chat_timing", "first_token_ms": 1500, "token_ms": 30}' >/dev/null
        setup=$(mktemp)
        cat >"$setup" <<PYEOF
params = env["ir.config_parameter"].sudo()
for key, value in {"ollama_url": "$STANDIN_URL", "embedding_model": "hash-embed", "chat_model": "standin-chat",
                   "query_prefix": "", "passage_prefix": "", "max_concurrent_answers": 24,
                   "max_answers_per_user": 2, "answer_time_limit": 90}.items():
    params.set_param("pv_kb." + key, value)
group = env.ref("pv_kb.group_pv_kb_user")
for login in ["pv_kb_load_%02d" % n for n in range(1, $users + 1)] + ["pv_kb_load_probe"]:
    if not env["res.users"].search([("login", "=", login)]):
        env["res.users"].create({"name": login, "login": login, "password": login,
                                 "group_ids": [(4, env.ref("base.group_user").id), (4, group.id)]})
env.cr.commit()
print(env["pv.kb.chunk"]._embed_pending(commit=True))
PYEOF
        shell $db "$setup"; rm -f "$setup"
        dsn="host=127.0.0.1 port=$PV_KB_PGPORT dbname=$db user=$PV_KB_DB_USER password=$PV_KB_DB_PASSWORD"
        # nginx: --workers 4 behind nginx with Odoo's documented rules only; direct: the same Odoo, everything
        # straight to its HTTP port (no proxy); threaded: --workers 0
        for mode in ${BENCH_LOAD_MODES:-nginx direct threaded}; do
            port=$(free_port); gport=$(free_port)
            if [[ $mode == threaded ]]; then
                "$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d $db --workers 0 --max-cron-threads 0 --http-port $port \
                    --logfile "$LOGDIR/bench-load-$mode.log" & pids+=($!)
                url=http://127.0.0.1:$port
            else
                "$PY" "$ODOO_PATH/odoo-bin" -c "$ODOO_CONF" -d $db --workers 4 --max-cron-threads 0 --http-port $port \
                    --gevent-port $gport --limit-time-real 120 --proxy-mode --logfile "$LOGDIR/bench-load-$mode.log" & pids+=($!)
                url=http://127.0.0.1:$port
            fi
            for _ in $(seq 120); do
                curl -fsS "http://127.0.0.1:$port/web/health" >/dev/null 2>&1 && break
                sleep 0.5
            done
            if [[ $mode == nginx ]]; then
                nginx_dir=$(mktemp -d); sport=$(free_port)
                start_odoo_nginx "$nginx_dir" "$sport" "$port" "$gport"; pids+=($NGINX_PID)
                url=https://127.0.0.1:$sport
                for _ in $(seq 120); do   # the gevent worker starts a little after the HTTP workers
                    curl -fksS "$url/websocket/health" >/dev/null 2>&1 && break
                    sleep 0.5
                done
            fi
            "$PY" "$REPO/scripts/bench/bench_load.py" --url "$url" --db $db \
                --users "$users" --dsn "$dsn" --label "$mode" || true
            if grep -E "DistributionNotFound|Traceback" "$LOGDIR/bench-load-$mode.log" >/dev/null; then
                say "Errors in the Odoo log ($mode), see $LOGDIR/bench-load-$mode.log"
            fi
            if [[ $mode == nginx ]]; then
                kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'; rm -rf "$nginx_dir"
            elif [[ $mode == direct ]]; then
                # the settings page's warning, as the admin sees it after this load
                echo "print('settings warning:', env['res.config.settings'].create({}).pv_kb_serving_warning or '(none)')" \
                    | odoo_bin shell -c "$ODOO_CONF" -d $db --log-level=warn --no-http 2>/dev/null | grep 'settings warning' || true
            fi
            kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
        done ;;
    *) die "Usage: scripts/bench/run.sh import|retrieval DB|tune DB|ceiling DB|scale [ENTRIES]|embed [OPTIONS]|reembed DB|pipeline DB|health [DB]|fact-answers [--distractors] [DB]|load [USERS]|pii [OPTIONS]|pii-odoo [DB]" ;;
esac
