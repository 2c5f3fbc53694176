// Swagger UI for the API document. A file, not an inline script: every HTML page's CSP
// (corrige/server/headers.py) allows scripts from files only.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  validatorUrl: null, // no badge from validator.swagger.io: the page asks nothing of another host
  showExtensions: true,
  showCommonExtensions: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
