#include "vips_shim.h"
#include <stdint.h>
#include <string.h>

/* PNG chunk lengths checked against the bytes present before libpng sees the file: libpng allocates a
 * chunk's declared length before reading it, so a 57-byte file declaring a 1 GiB tEXt/iTXt/pCAL/sPLT/sCAL
 * chunk costs a gigabyte (libpng's contrib/testpngs/crashers/huge_*_chunk.png). Walks chunk headers only:
 * 8 + 12 bytes per chunk, no data read, no CRC computed (libpng checks those). */

static uint32_t ipx_png_read32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int ipx_png_check_chunks(const void *buffer, size_t length) {
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    const uint8_t *p = buffer;
    if (length < 8 || memcmp(p, signature, 8) != 0) return -1;
    size_t offset = 8;
    int chunks = 0;
    while (offset < length) {
        if (length - offset < 12) return -1; /* a chunk header and CRC cut short */
        uint32_t declared = ipx_png_read32(p + offset);
        if (declared > 0x7FFFFFFFu || declared > length - offset - 12) return -1; /* more than is there */
        chunks++;
        if (memcmp(p + offset + 4, "IEND", 4) == 0) return chunks;
        offset += 12 + (size_t)declared;
    }
    return chunks; /* no IEND: libpng decides (it reports a truncated file) */
}
