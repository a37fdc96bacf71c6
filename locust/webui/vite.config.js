// Builds dist/: index.html (a Jinja template: Locust fills window.templateArgs) and assets/, which the
// Locust master serves with --build-path (LOCUST_BUILD_PATH). Relative asset URLs, so the UI works
// under any path; nothing is loaded from anywhere else at run time.
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One file for the app: Locust's own UI is one file too, and a projector laptop fetches it once.
    chunkSizeWarningLimit: 4096,
    reportCompressedSize: false,
    rollupOptions: {
      // MUI marks its modules "use client" (for React Server Components); meaningless in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
