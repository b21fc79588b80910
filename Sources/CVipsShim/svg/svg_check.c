#include "vips_shim.h"
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>
#include <strings.h>

/* What an SVG source may ask of the renderer, checked before librsvg sees it (issue #62): the document is
   parsed by libxml2 (no network, no entity substitution, no external DTD, libxml2's own depth limit of 256)
   and its tree walked once. librsvg, given bytes without a base file (libvips' svgload_buffer), already
   refuses file:, http(s): and relative references and XInclude; it still renders `data:` references,
   another SVG among them, and expands internal entities. This walk refuses, by name:
     - entity declarations (expansion bombs, and SYSTEM entities should a later librsvg resolve them);
     - XInclude elements and `<?xml-stylesheet?>` instructions;
     - a reference other than a fragment (`#id`) or an embedded PNG, JPEG, GIF or WebP: in `href` on any
       element but `<a>` (whose links are never followed), in `url(...)` anywhere (attributes, `style`,
       `<style>`), and CSS `@import`;
     - more than IPX_SVG_MAX_ELEMENTS elements.
   It counts what the CPU estimate needs: elements, `<use>`s, filter primitives, filtered elements, and
   elements drawn through a surface of their own (a mask, a clip path or a group opacity).
   No library does this check; libxml2 does all the parsing, and the fuzz target `containers` runs it. */

static int starts_with_ci(const char *text, const char *prefix) {
    return strncasecmp(text, prefix, strlen(prefix)) == 0;
}

static const char *skip_space(const char *text) {
    while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r' || *text == '\f') text++;
    return text;
}

/* Whether a reference (the value of an href, or what a url() holds) stays inside the document or embeds a
   raster image. */
static int reference_is_local(const char *value) {
    const char *text = skip_space(value);
    if (*text == '"' || *text == '\'') text = skip_space(text + 1);
    if (*text == '#' || *text == '\0') return 1;
    static const char *const rasters[] = {"data:image/png", "data:image/jpeg", "data:image/jpg", "data:image/gif",
                                          "data:image/webp"};
    for (size_t i = 0; i < sizeof(rasters) / sizeof(rasters[0]); i++) {
        size_t length = strlen(rasters[i]);
        if (starts_with_ci(text, rasters[i]) && (text[length] == ';' || text[length] == ',')) return 1;
    }
    return 0;
}

/* Checks every url(...) and @import in a CSS or attribute text. */
static int check_text(const char *text) {
    for (const char *at = text; *at; at++) {
        if (*at == '@' && starts_with_ci(at + 1, "import")) return IPX_SVG_EXTERNAL;
        if ((*at == 'u' || *at == 'U') && starts_with_ci(at, "url(")) {
            if (!reference_is_local(at + 4)) return IPX_SVG_EXTERNAL;
            at += 3;
        }
    }
    return IPX_SVG_OK;
}

static int is_named(const xmlNode *node, const char *name) {
    return node->name && strcmp((const char *)node->name, name) == 0;
}

static int check_element(const xmlNode *node, ipx_svg_census *census) {
    if (node->ns && node->ns->href && strcmp((const char *)node->ns->href, "http://www.w3.org/2001/XInclude") == 0) {
        return IPX_SVG_XINCLUDE;
    }
    if (++census->elements > IPX_SVG_MAX_ELEMENTS) return IPX_SVG_TOO_COMPLEX;
    if (is_named(node, "use")) census->uses++;
    if (node->name && strncmp((const char *)node->name, "fe", 2) == 0) census->filter_primitives++;
    int filtered = 0, offscreen = 0;
    for (const xmlAttr *attribute = node->properties; attribute; attribute = attribute->next) {
        xmlChar *value = xmlNodeListGetString(node->doc, attribute->children, 1);
        const char *text = value ? (const char *)value : "";
        int status = IPX_SVG_OK;
        if (is_named((const xmlNode *)attribute, "href") && !is_named(node, "a") && !reference_is_local(text)) {
            status = IPX_SVG_EXTERNAL;
        } else {
            status = check_text(text);
        }
        if (is_named((const xmlNode *)attribute, "filter") && strstr(text, "url(")) filtered = 1;
        if (is_named((const xmlNode *)attribute, "mask") || is_named((const xmlNode *)attribute, "clip-path") ||
            is_named((const xmlNode *)attribute, "opacity")) {
            offscreen = 1;
        }
        if (is_named((const xmlNode *)attribute, "style")) {
            if (strstr(text, "filter")) filtered = 1;
            if (strstr(text, "mask") || strstr(text, "clip-path") || strstr(text, "opacity")) offscreen = 1;
        }
        xmlFree(value);
        if (status != IPX_SVG_OK) return status;
    }
    census->filtered_elements += filtered;
    census->offscreen_elements += offscreen;
    return IPX_SVG_OK;
}

int ipx_svg_check(const void *buffer, size_t length, ipx_svg_census *census) {
    memset(census, 0, sizeof(*census));
    if (length > (size_t)0x7fffffff) return IPX_SVG_TOO_COMPLEX;
    xmlDocPtr doc = xmlReadMemory(buffer, (int)length, NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) return IPX_SVG_NOT_XML;
    int status = IPX_SVG_OK;
    if (doc->intSubset && (doc->intSubset->entities || doc->intSubset->pentities)) status = IPX_SVG_ENTITY;
    if (doc->extSubset && (doc->extSubset->entities || doc->extSubset->pentities)) status = IPX_SVG_ENTITY;
    xmlNode *root = xmlDocGetRootElement(doc);
    if (status == IPX_SVG_OK && (!root || !is_named(root, "svg"))) status = IPX_SVG_NOT_SVG;
    /* Processing instructions beside the root (xml-stylesheet). */
    for (xmlNode *node = doc->children; status == IPX_SVG_OK && node; node = node->next) {
        if (node->type == XML_PI_NODE) status = IPX_SVG_EXTERNAL;
    }
    /* The tree in document order, without recursion. */
    xmlNode *node = root;
    while (status == IPX_SVG_OK && node) {
        switch (node->type) {
        case XML_ELEMENT_NODE:
            status = check_element(node, census);
            break;
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE:
            if (node->parent && is_named(node->parent, "style") && node->content) status = check_text((const char *)node->content);
            break;
        case XML_PI_NODE:
        case XML_XINCLUDE_START:
            status = IPX_SVG_EXTERNAL;
            break;
        case XML_ENTITY_REF_NODE:
            status = IPX_SVG_ENTITY;
            break;
        default:
            break;
        }
        if (status != IPX_SVG_OK) break;
        if (node->type == XML_ELEMENT_NODE && node->children) {
            node = node->children;
            continue;
        }
        while (node && node != root && !node->next) node = node->parent;
        node = (node && node != root) ? node->next : NULL;
    }
    xmlFreeDoc(doc);
    return status;
}
