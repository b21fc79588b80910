#include "vips_shim.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* libjpeg's large blocks, mapped in 2 MiB pages where the kernel has them.
 *
 * libjpeg asks its system-dependent memory layer (jmemsys.h, jmemnobs.c: plain malloc) for every large
 * block it needs: above all the whole-image coefficient buffer that a progressive decode, and every
 * encode with optimised Huffman tables, fills before it writes a row (3840x2160 at 4:2:0: 25 MiB; at
 * 4:4:4: 50 MiB). From malloc such a block is a fresh mapping faulted in 4 KiB at a time: 6,000–12,000
 * page faults, about 8 ms of kernel time for one 3840 px JPEG encode on the benchmark machine, an eighth
 * of the whole request. libjpeg-turbo exports jpeg_get_large and jpeg_free_large and calls them through
 * its PLT, so these definitions in the executable take their place, for every libjpeg user in the process
 * (our decoders and encoder, and libvips' jpegload and jpegsave).
 *
 * A block from IPX_JPEG_MAPPED_MIN_BYTES on gets a mapping of its own at a 2 MiB boundary, advised
 * MADV_HUGEPAGE (ipx_huge_map), and is unmapped when libjpeg frees it; a smaller one comes from malloc as
 * before. Each block starts with a header naming its kind and mapped length, so that freeing never depends
 * on the size libjpeg passes back (libjpeg-turbo's pool header and alignment make it differ from the size
 * it asked for). The kernel falls back to small pages when it has no huge page (or transparent huge pages
 * are off); the memory is the same either way. Nothing is kept between blocks: the process holds no more
 * than before, at most 2 MiB more per mapped block while it lives. */

/* Ahead of the block handed out: 64 bytes, so that libjpeg's own alignment of what it gets is kept. */
struct ipx_jpeg_block_header {
    size_t mapped_length; /* 0: from malloc */
    size_t magic;
    unsigned char padding[48];
};

#define IPX_JPEG_BLOCK_MAGIC ((size_t)0x6970786a70656731ULL)

static atomic_ullong ipx_jpeg_mapped_blocks;

unsigned long long ipx_jpeg_mapped_blocks_total(void) { return atomic_load(&ipx_jpeg_mapped_blocks); }

void *jpeg_get_large(struct jpeg_common_struct *info, size_t bytes) {
    (void)info;
    size_t header = sizeof(struct ipx_jpeg_block_header);
    if (bytes > SIZE_MAX / 2) return NULL;
    struct ipx_jpeg_block_header *block = NULL;
    if (bytes >= IPX_JPEG_MAPPED_MIN_BYTES) {
        size_t length = 0;
        block = ipx_huge_map(bytes + header, &length);
        if (block) {
            block->mapped_length = length;
            atomic_fetch_add(&ipx_jpeg_mapped_blocks, 1);
        }
    }
    if (!block) {
        block = malloc(bytes + header);
        if (!block) return NULL;
        block->mapped_length = 0;
    }
    block->magic = IPX_JPEG_BLOCK_MAGIC;
    return block + 1;
}

void jpeg_free_large(struct jpeg_common_struct *info, void *object, size_t bytes) {
    (void)info;
    (void)bytes;
    if (!object) return;
    struct ipx_jpeg_block_header *block = (struct ipx_jpeg_block_header *)object - 1;
    if (block->magic != IPX_JPEG_BLOCK_MAGIC) abort(); /* not a block of ours: never free what we did not hand out */
    block->magic = 0;
    if (block->mapped_length) {
        munmap(block, block->mapped_length);
    } else {
        free(block);
    }
}
