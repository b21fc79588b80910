/// The OpenAPI 3.1 description of every route, parameter, status and header, served at `GET /openapi.json`.
/// Its one source is `api/openapi.json`: the EmbedOpenAPIDocument build plugin makes it ``json`` at build
/// time. CI validates it and runs schemathesis against the binary with it.
public enum OpenAPIDocument {}
