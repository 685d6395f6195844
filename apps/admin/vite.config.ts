import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the API under /admin; in development Vite proxies /api to the API.
export default defineConfig({
  base: '/admin/',
  plugins: [react()],
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
  build: {
    rollupOptions: {
      onwarn(warning, warn) {
        // zod (through @platform/shared) carries comments Rollup cannot place; harmless noise
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('/zod/')) return;
        warn(warning);
      },
    },
  },
});
