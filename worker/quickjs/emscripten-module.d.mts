// Types of the emscripten loader scripts/build-quickjs.sh builds (MODULARIZE, EXPORT_ES6), as upstream's.
import type { EmscriptenModuleLoader, QuickJSEmscriptenModule } from "quickjs-emscripten-core";

declare const ModuleLoader: EmscriptenModuleLoader<QuickJSEmscriptenModule>;
export default ModuleLoader;
