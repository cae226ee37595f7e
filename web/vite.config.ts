// The web client's build: one bundle, no CDN, served by the API from web/dist.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: { outDir: 'dist', assetsInlineLimit: 0, sourcemap: false, target: 'es2022' },
});
