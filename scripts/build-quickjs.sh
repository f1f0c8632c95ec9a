#!/usr/bin/env bash
# Builds OpenBot's QuickJS WebAssembly (worker/quickjs/): quickjs-emscripten v0.32.0's sync release variant
# (bellard/quickjs from its vendor/quickjs, patches already applied there, and its c/interface.c) plus
# worker/quickjs/bytecode.c (two functions: compile a script to bytecode, run bytecode). Upstream's C flags and
# emscripten settings (its variant-quickjs-wasmfile-release-sync Makefile) but -O3, from this machine's emcc.
#
#   QJS_REPO=<quickjs-emscripten git dir> scripts/build-quickjs.sh
#
# QJS_REPO defaults to the mirror this was first built from; QJS_REF to v0.32.0. Writes
# worker/quickjs/emscripten-module.{mjs,wasm} and worker/quickjs/BUILD.txt (emcc version, source commit,
# sha256 of both outputs, which test/engine/quickjs-build.test.ts checks).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
repo="${QJS_REPO:-/work/.mirror/justjake+quickjs-emscripten/repo}"
ref="${QJS_REF:-v0.32.0}"
out="${QJS_OUT:-$root/worker/quickjs}"
# -O3, not upstream's -Oz: with this clang (LLVM 14) -Oz runs guest code ~1.45x slower than the stock build and
# needs more native stack per QuickJS stack byte; -O3 is ~10% faster than stock at compute (see worker/PROGRESS.md).
opt="${QJS_OPT:--O3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

commit="$(git --git-dir="$repo" rev-parse "$ref^{commit}")"
git --git-dir="$repo" archive "$commit" c/interface.c vendor/quickjs templates/pre-extension.js \
  templates/pre-wasmMemory.js exportedRuntimeMethods.json | tar -x -C "$work"
cp "$root/worker/quickjs/bytecode.c" "$work/c/bytecode.c"

# Exported functions: every QTS_ function interface.c defines for a sync release build (not DebugOnly or
# AsyncifyOnly, as upstream's generate.ts picks them), ours, and the allocator.
node - "$work/c/interface.c" "$work/c/bytecode.c" > "$work/symbols.json" <<'JS'
const fs = require("node:fs");
const decl = /^([\w()* ]+[\s*]+)(QTS_\w+)(\((.*?)\)) ?{$/gm;
const names = [];
for (const file of process.argv.slice(2)) {
  for (const m of fs.readFileSync(file, "utf8").matchAll(decl)) {
    if (/DebugOnly|AsyncifyOnly/.test(m[1])) continue;
    names.push(`_${m[2]}`);
  }
}
console.log(JSON.stringify([...names, "_malloc", "_free"]));
JS

# emcc runs its JS optimizer with node; Debian ships the acorn it needs in /usr/share/nodejs (node-acorn).
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
version="$(cat "$work/vendor/quickjs/VERSION")"
# Upstream's CFLAGS_WASM for the release sync variant (emcc 3.1.6: TOTAL_STACK for STACK_SIZE, no MIN_NODE_VERSION, and cwrap is in its preamble, not -lccall.js).
flags=(
  -s MODULARIZE=1 -s IMPORTED_MEMORY=1 -s EXPORT_NAME=QuickJSRaw -s INVOKE_RUN=0
  -s ALLOW_MEMORY_GROWTH=1 -s ALLOW_TABLE_GROWTH=1 -s TOTAL_STACK=5MB -s SUPPORT_ERRNO=0
  -s IGNORE_MISSING_MAIN=0 --no-entry -s AUTO_JS_LIBRARIES=0 -s AUTO_NATIVE_LIBRARIES=0
  -s AUTO_ARCHIVE_INDEXES=0 -s DEFAULT_TO_CXX=0 -s ALLOW_UNIMPLEMENTED_SYSCALLS=0
  -s NODEJS_CATCH_EXIT=0
  -s "EXPORTED_RUNTIME_METHODS=@$work/exportedRuntimeMethods.json"
  "$opt" -flto -s FILESYSTEM=0 -Wno-unused-command-line-argument
  --pre-js "$work/templates/pre-extension.js" --pre-js "$work/templates/pre-wasmMemory.js"
)
# No build-directory paths in the output (assert messages carry __FILE__), so the same sources give the same .wasm.
flags+=("-ffile-prefix-map=$work=.")
defines=(-D_GNU_SOURCE "-DCONFIG_VERSION=\"$version\"" -DCONFIG_STACK_CHECK)
objs=()
for src in quickjs dtoa libregexp libunicode cutils quickjs-libc; do
  emcc "${flags[@]}" "${defines[@]}" -c -o "$work/$src.o" "$work/vendor/quickjs/$src.c" &
  objs+=("$work/$src.o")
done
emcc "${flags[@]}" -Wcast-function-type -c -o "$work/bytecode.o" "$work/c/bytecode.c" &
wait
# One loader for Node, pages and Web Workers, built for web,worker (emcc 3.1.6's node glue uses __dirname and
# require, which an ES module does not have): the host always hands it the compiled .wasm (instantiateWasm),
# so the loader never fetches or reads a file itself.
emcc "${flags[@]}" -Wcast-function-type -s EXPORT_ES6=1 -s ENVIRONMENT=web,worker \
  -s "EXPORTED_FUNCTIONS=@$work/symbols.json" -o "$work/emscripten-module.mjs" "$work/bytecode.o" "${objs[@]}"

cp "$work/emscripten-module.mjs" "$work/emscripten-module.wasm" "$out/"
{
  echo "emcc: $(emcc --version | head -1)"
  echo "source: justjake/quickjs-emscripten $ref ($commit), vendor/quickjs $version"
  echo "added: worker/quickjs/bytecode.c"
  (cd "$out" && sha256sum emscripten-module.mjs emscripten-module.wasm)
} > "$out/BUILD.txt"
cat "$out/BUILD.txt"
