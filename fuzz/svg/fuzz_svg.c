/* libFuzzer target for svg_check.c: the walk over libxml2's tree of an SVG source that refuses references
 * outside the document, entities and XInclude, and counts what the CPU estimate reads. Built with
 * clang -fsanitize=fuzzer,address,undefined by fuzz/run.sh (with fuzz/svg/svg.dict); any sanitizer report
 * or a census outside its bounds fails. */
#include "vips_shim.h"
#include <libxml/parser.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    xmlInitParser();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ipx_svg_census census;
    int status = ipx_svg_check(data, size, &census);
    if (status > IPX_SVG_OK || status < IPX_SVG_TOO_COMPLEX) abort();
    if (census.elements < 0 || census.elements > IPX_SVG_MAX_ELEMENTS + 1) abort();
    if (census.uses > census.elements || census.filter_primitives > census.elements) abort();
    if (census.filtered_elements > census.elements || census.offscreen_elements > census.elements) abort();
    return 0;
}
