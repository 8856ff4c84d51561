import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The UI is served by Tauri (custom protocol) and by `flashback serve` (embedded); both load it
// from the root of their origin. `npm run dev` serves it on 127.0.0.1:5173 for `tauri dev`.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  // `FLASHBACK_API=http://127.0.0.1:PORT npm run dev` proxies the API of a running
  // `flashback serve --port PORT`; open http://127.0.0.1:5173/#token=<its token>.
  server: {
    host: "127.0.0.1",
    port: 5173,
    strictPort: true,
    proxy: process.env.FLASHBACK_API ? { "/api": process.env.FLASHBACK_API } : undefined,
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
    env: { TZ: "UTC" },
  },
});
