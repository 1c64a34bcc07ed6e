// Tailwind CSS 4 runs as a PostCSS plugin.
const config = { plugins: { "@tailwindcss/postcss": {} } };

export default config;
