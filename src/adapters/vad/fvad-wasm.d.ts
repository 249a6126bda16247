/** @echogarden/fvad-wasm ships no types: its default export instantiates the Emscripten module. */
declare module '@echogarden/fvad-wasm' {
  const instantiate: () => Promise<unknown>;
  export default instantiate;
}
