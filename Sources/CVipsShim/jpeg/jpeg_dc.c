#include "vips_shim.h"
#include "../platform/monotonic_clock.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A 1/8-scale decode of a progressive or baseline JPEG from its DC coefficients alone (and a 1/4-scale one of a
 * baseline JPEG from its first coefficients).
 *
 * At 1/8 scale each 8x8 block becomes one pixel: its mean, which is its DC coefficient. A progressive
 * file sends the DC coefficients of every block first (one scan, or one per component), then the AC
 * scans (most of the file), and usually one DC refinement scan (the last bit) somewhere among them. This
 * decoder Huffman-decodes only the DC scans and steps over every AC scan by looking for its end marker,
 * so it reads a few percent of the entropy-coded bits and needs no coefficient buffer (libjpeg keeps
 * every coefficient of the image, 88 MB for a 5120x2880 4:4:4 file, even when only DC is wanted).
 * A baseline (sequential) file of one interleaved scan has no scan of DC coefficients alone: each block's
 * DC code comes with its AC codes. Those are Huffman-decoded only to be stepped over, the way libjpeg's
 * decode_mcu does when only the DC term is needed (same codes, same end of block), but from a lookup of
 * up to IPX_MULTI_BITS bits that steps over every whole code and magnitude they hold at once.
 * Only files whose components share one sampling (4:4:4 colour, grey) are decoded: for subsampled chroma
 * libjpeg's 1/8 decode uses a 2x2 IDCT with AC terms, which the DC alone cannot reproduce.
 *
 * The same decoder makes a baseline file's 1/4 image (ipx_jpeg_decode_quarter): each block's 2x2 samples
 * from libjpeg's 2x2 IDCT (jidctred.c's arithmetic), fed with the values of the block's first `coefficients`
 * codes in zigzag order, looked up with their magnitudes in one step (`valued`); the rest of the block is
 * stepped over as above and taken as zeros. With all 64 read the image is libjpeg's 1/4 decode exactly;
 * with the service's 5 (the DC and the terms of rows and columns 0 and 1) it is within a few levels of it.
 *
 * Every marker segment up to EOI is walked (AC scans stepped over by their end marker), so that a file
 * this decoder answers is one libjpeg would read whole too. Anything else (a baseline frame scanned
 * component by component, arithmetic-coded
 * files, 12-bit samples, CMYK/RGB/Adobe-transformed files, a missing EOI, a corrupt or repeated DC scan,
 * any anomaly) returns 1, and the caller takes libvips' path, which then decides how the damage is
 * answered for every variant alike.
 *
 * Bounds: at most IPX_JPEG_MAX_SCANS scans; the deadline is checked every block row; DC predictors and
 * samples are clamped, so no arithmetic overflows whatever the tables say; a Huffman table's lookups
 * (a few thousand entries) are made once per definition and only when a scan reads it, so a file defining
 * tables over and over costs no more than its bytes; a block reads at most 63 AC codes. */

#define IPX_MAX_COMPONENTS 3

/* Codes up to this many bits are looked up in one step (a baseline scan's AC codes are nearly all this short). */
#define IPX_FAST_BITS 10
/* A baseline block's AC coefficients are stepped over this many bits at a time (several short ones at once). */
#define IPX_MULTI_BITS 12

struct ipx_huffman {
    int defined;
    int lookups_built; /* fast, skip (and multi) made for this definition: at the first scan that reads it */
    int32_t maxcode[17]; /* largest code of each length, -1 when none */
    int32_t valptr[17];
    int32_t mincode[17];
    uint8_t values[256];
    uint16_t fast[1 << IPX_FAST_BITS]; /* by the next IPX_FAST_BITS bits: length << 8 | symbol; 0 when longer */
    /* AC tables: by the same bits, the code's length plus its magnitude's bits << 8 | how far it moves the
       coefficient index (run + 1; 16 for a run of sixteen zeros; 0 for the end of the block); 0 when longer. */
    uint16_t skip[1 << IPX_FAST_BITS];
    /* AC tables: by the next IPX_MULTI_BITS bits, every whole coefficient (code and magnitude) they hold,
       up to and including an end of block: bits used | index advance << 4 | 1 << 10 when the block ended
       there; 0 when not even one coefficient is whole within them. */
    uint16_t multi[1 << IPX_MULTI_BITS];
    /* AC tables, for the 1/4 decode: by the next IPX_FAST_BITS bits, a code and its magnitude when both fit:
       the signed value << 16 | IPX_VALUE_END at an end of block | run << 5 | bits used; 0 when they do not
       fit. A run of sixteen zeros is a run of 15 and a value of 0. */
    int32_t valued[1 << IPX_FAST_BITS];
};

#define IPX_VALUE_END (1 << 9)

struct ipx_component {
    int id, h, v, quant_table, dc_table, ac_table;
    /* The quantisation table as libjpeg latches it at the component's first scan (a DQT segment after that
       does not change a component already started), in zigzag order: steps[0] for the DC term, the rest for
       the AC terms a 1/4 decode reads. */
    int latched;
    uint16_t steps[64];
    /* The component's plane of 8-bit samples, the stored grid's (stride x rows blocks) at the decode's scale:
       one sample a block at 1/8 (made from `dc` once the file is read), 2x2 at 1/4 (made block by block). */
    uint8_t *samples;
    int samples_stride;
    int blocks_w, blocks_h; /* the component's own blocks (non-interleaved scans) */
    int stride, rows;       /* the stored grid, padded to whole MCUs */
    int16_t *dc;
    int known_bits; /* -1: no DC yet; else the Al of the last DC scan (0: complete) */
    int predictor;
};

struct ipx_dc_decoder {
    const uint8_t *data, *end, *p;
    int width, height, count, hmax, vmax, restart_interval, progressive, sequential, adobe_transform, scans;
    long long deadline_ns; /* CLOCK_MONOTONIC; 0: none */
    int shrink;            /* 8: one sample a block (the DC term); 4: 2x2 samples a block (baseline frames only) */
    int coefficients;      /* 1/4 decode: the AC terms below this zigzag index are read; the rest stepped over */
    uint16_t quant[4][64]; /* in zigzag order, as the DQT segment sends them */
    int quant_defined[4];
    struct ipx_huffman dc_tables[4];
    struct ipx_huffman ac_tables[4]; /* read for sequential (baseline) frames, whose AC codes are stepped over */
    struct ipx_component comps[IPX_MAX_COMPONENTS];
    /* bit reader: the next bits at the top */
    uint64_t bits;
    int bit_count;
    int phantom; /* zero bytes fed past the segment's data since the last reset */
    /* ICC profile chunks (APP2 "ICC_PROFILE") */
    const uint8_t *icc_chunk[256];
    size_t icc_length[256];
    int icc_chunks;
};

static int ipx_read16(const uint8_t *p) { return (p[0] << 8) | p[1]; }

/* Fills an AC table's `multi` from its `skip` lookup: for each pattern of IPX_MULTI_BITS bits, the whole
   coefficients it starts with. */
static void ipx_build_multi(struct ipx_huffman *t) {
    for (uint32_t pattern = 0; pattern < (1u << IPX_MULTI_BITS); pattern++) {
        int used = 0, advance = 0, ended = 0;
        while (used < IPX_MULTI_BITS) {
            /* The next IPX_FAST_BITS bits from `used` on (zeros past the pattern's end). */
            uint32_t window = (pattern << used) & ((1u << IPX_MULTI_BITS) - 1);
            uint32_t index = IPX_MULTI_BITS >= IPX_FAST_BITS ? window >> (IPX_MULTI_BITS - IPX_FAST_BITS)
                                                             : window << (IPX_FAST_BITS - IPX_MULTI_BITS);
            uint16_t entry = t->skip[index];
            int length = entry >> 8, step = entry & 0xFF;
            /* Not a code of at most IPX_FAST_BITS bits, or not whole (code and magnitude) within the pattern. */
            if (!entry || used + length > IPX_MULTI_BITS) break;
            used += length;
            if (!step) {
                ended = 1;
                break;
            }
            advance += step;
        }
        /* `advance` is at most 16 per coefficient of at least one bit: below 64 * 4 is not needed, but the
           field holds 63 at most, so longer runs are left to the one-coefficient path. */
        t->multi[pattern] = used && advance <= 63 ? (uint16_t)(used | advance << 4 | ended << 10) : 0;
    }
}

/* Makes a table's lookups (`fast`, `skip`, and `multi` for an AC table) from its canonical codes. */
static void ipx_build_lookups(struct ipx_huffman *t, int ac) {
    if (t->lookups_built) return;
    memset(t->fast, 0, sizeof(t->fast));
    memset(t->skip, 0, sizeof(t->skip));
    memset(t->valued, 0, sizeof(t->valued));
    for (int len = 1; len <= IPX_FAST_BITS; len++) {
        if (t->maxcode[len] < 0) continue;
        for (int32_t code = t->mincode[len]; code <= t->maxcode[len]; code++) {
            /* Every continuation of a short code: codes of one length are consecutive. */
            int32_t first = code << (IPX_FAST_BITS - len), count = 1 << (IPX_FAST_BITS - len);
            int symbol = t->values[t->valptr[len] + code - t->mincode[len]], run = symbol >> 4, magnitude = symbol & 15;
            int advance = magnitude ? run + 1 : run == 15 ? 16 : 0;
            for (int32_t j = 0; j < count; j++) {
                t->fast[first + j] = (uint16_t)(len << 8 | symbol);
                t->skip[first + j] = (uint16_t)((len + magnitude) << 8 | advance);
                if (!ac || len + magnitude > IPX_FAST_BITS) continue;
                int32_t entry = len + magnitude;
                if (magnitude) {
                    /* The magnitude's bits follow the code within the index; the value as T.81 F.12 extends it. */
                    int raw = (int)((uint32_t)(first + j) >> (IPX_FAST_BITS - len - magnitude)) & ((1 << magnitude) - 1);
                    int value = raw < (1 << (magnitude - 1)) ? raw - (1 << magnitude) + 1 : raw;
                    entry |= run << 5 | (int32_t)((uint32_t)value << 16);
                } else if (run == 15) {
                    entry |= 15 << 5;
                } else {
                    entry |= IPX_VALUE_END;
                }
                t->valued[first + j] = entry;
            }
        }
    }
    if (ac) ipx_build_multi(t);
    t->lookups_built = 1;
}

static int ipx_define_huffman(struct ipx_dc_decoder *d, const uint8_t *p, int length) {
    while (length > 0) {
        if (length < 17) return 0;
        int table_class = p[0] >> 4, id = p[0] & 15, total = 0;
        if (id > 3 || table_class > 1) return 0;
        for (int i = 1; i <= 16; i++) total += p[i];
        if (total > 256 || length < 17 + total) return 0;
        struct ipx_huffman *t = table_class == 0 ? &d->dc_tables[id] : &d->ac_tables[id];
        int32_t code = 0, k = 0;
        for (int len = 1; len <= 16; len++) {
            int n = p[len];
            t->valptr[len] = k;
            t->mincode[len] = code;
            /* No code may be all ones, nor longer than its length (libjpeg's jpeg_make_d_derived_tbl refuses
               such a table: JERR_BAD_HUFF_TABLE). */
            if (n && code + n >= (1 << len)) return 0;
            code += n;
            k += n;
            t->maxcode[len] = n ? code - 1 : -1;
            code <<= 1;
        }
        memcpy(t->values, p + 17, (size_t)total);
        /* A DC difference has at most 15 bits' magnitude: libjpeg refuses a DC table with larger symbols. */
        for (int i = 0; i < total && table_class == 0; i++) {
            if (t->values[i] > 15) return 0;
        }
        /* The lookups are made when a scan first reads the table: a file may define tables many times over,
           and each definition costs no more than its bytes. */
        t->lookups_built = 0;
        t->defined = 1;
        p += 17 + total;
        length -= 17 + total;
    }
    return 1;
}

static int ipx_define_quant(struct ipx_dc_decoder *d, const uint8_t *p, int length) {
    while (length > 0) {
        int precision = p[0] >> 4, id = p[0] & 15, size = precision ? 129 : 65;
        if (id > 3 || length < size) return 0;
        for (int k = 0; k < 64; k++) d->quant[id][k] = precision ? (uint16_t)ipx_read16(p + 1 + 2 * k) : p[1 + k];
        d->quant_defined[id] = 1;
        p += size;
        length -= size;
    }
    return 1;
}

static int ipx_start_frame(struct ipx_dc_decoder *d, const uint8_t *p, int length) {
    if (d->count || length < 6) return 0;
    if (p[0] != 8) return 0;
    d->height = ipx_read16(p + 1);
    d->width = ipx_read16(p + 3);
    d->count = p[5];
    if (d->width <= 0 || d->height <= 0 || (d->count != 1 && d->count != 3) || length < 6 + 3 * d->count) return 0;
    if ((int64_t)d->width * d->height > ((int64_t)1 << 28)) return 0;
    d->hmax = d->vmax = 1;
    for (int c = 0; c < d->count; c++) {
        struct ipx_component *comp = &d->comps[c];
        comp->id = p[6 + 3 * c];
        comp->h = p[7 + 3 * c] >> 4;
        comp->v = p[7 + 3 * c] & 15;
        comp->quant_table = p[8 + 3 * c];
        if (comp->h < 1 || comp->h > 4 || comp->v < 1 || comp->v > 4 || comp->quant_table > 3) return 0;
        if (comp->h > d->hmax) d->hmax = comp->h;
        if (comp->v > d->vmax) d->vmax = comp->v;
    }
    for (int c = 0; c < d->count; c++) {
        if (d->comps[c].h != d->hmax || d->comps[c].v != d->vmax) return 0; /* subsampled: libjpeg's path */
    }
    int mcus_x = (d->width + 8 * d->hmax - 1) / (8 * d->hmax), mcus_y = (d->height + 8 * d->vmax - 1) / (8 * d->vmax);
    for (int c = 0; c < d->count; c++) {
        struct ipx_component *comp = &d->comps[c];
        int comp_w = (d->width * comp->h + d->hmax - 1) / d->hmax, comp_h = (d->height * comp->v + d->vmax - 1) / d->vmax;
        comp->blocks_w = (comp_w + 7) / 8;
        comp->blocks_h = (comp_h + 7) / 8;
        comp->stride = mcus_x * comp->h;
        comp->rows = mcus_y * comp->v;
        comp->dc = calloc((size_t)comp->stride * (size_t)comp->rows, sizeof(int16_t));
        if (!comp->dc) return -1;
        int per_block = d->shrink == 4 ? 2 : 1;
        comp->samples_stride = per_block * comp->stride;
        comp->samples = calloc((size_t)comp->samples_stride * (size_t)comp->rows, (size_t)per_block);
        if (!comp->samples) return -1;
        comp->known_bits = -1;
    }
    return 1;
}

/* The position of the next marker at or after `p` (stuffed 0xFF00 and restart markers are data). */
static const uint8_t *ipx_next_marker(const uint8_t *p, const uint8_t *end) {
    while (p + 1 < end) {
        const uint8_t *ff = memchr(p, 0xFF, (size_t)(end - p - 1));
        if (!ff) return end;
        uint8_t next = ff[1];
        if (next != 0x00 && next != 0xFF && !(next >= 0xD0 && next <= 0xD7)) return ff;
        p = ff + 1;
    }
    return end;
}

/* Bytes one at a time: stuffed 0xFF00, markers (zeros fed in their place) and the end of the data. */
static void ipx_fill_bytes(struct ipx_dc_decoder *d) {
    while (d->bit_count <= 56) {
        uint32_t byte = 0;
        if (d->p < d->end) {
            byte = *d->p;
            if (byte == 0xFF) {
                if (d->p + 1 < d->end && d->p[1] == 0x00) {
                    d->p += 2;
                } else {
                    byte = 0; /* a marker: feed zeros, as libjpeg does */
                    d->phantom++;
                }
            } else {
                d->p++;
            }
        } else {
            d->phantom++;
        }
        d->bits |= (uint64_t)byte << (56 - d->bit_count);
        d->bit_count += 8;
    }
}

/* Tops the bit buffer up to at least 57 bits. */
static inline void ipx_fill(struct ipx_dc_decoder *d) {
    if (d->bit_count <= 56 && d->end - d->p >= 8) {
        /* Eight bytes at once when none of them is 0xFF (no stuffing, no marker): as many as fit. */
        uint64_t word;
        memcpy(&word, d->p, sizeof(word));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        uint64_t inverted = ~word;
        if (!((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL)) {
            int bytes = (64 - d->bit_count) >> 3;
            d->bits |= (word & (~0ULL << (64 - 8 * bytes))) >> d->bit_count;
            d->bit_count += 8 * bytes;
            d->p += bytes;
            return;
        }
    }
    ipx_fill_bytes(d);
}

static int ipx_bits(struct ipx_dc_decoder *d, int n) {
    if (n == 0) return 0;
    ipx_fill(d);
    int value = (int)(d->bits >> (64 - n));
    d->bits <<= n;
    d->bit_count -= n;
    return value;
}

static int ipx_decode_symbol(struct ipx_dc_decoder *d, const struct ipx_huffman *t) {
    ipx_fill(d);
    int32_t code = 0;
    for (int len = 1; len <= 16; len++) {
        code = (code << 1) | (int32_t)(d->bits >> 63);
        d->bits <<= 1;
        d->bit_count--;
        if (t->maxcode[len] >= 0 && code <= t->maxcode[len]) {
            int index = t->valptr[len] + code - t->mincode[len];
            return index < 256 ? t->values[index] : -1;
        }
    }
    return -1;
}

/* After a restart interval: drop the partial byte and step over the RSTn marker. */
/* Whether the bits used so far came from the data (not from zeros fed past its end: libjpeg's "premature
   end of data segment", damage). */
static int ipx_data_sufficed(const struct ipx_dc_decoder *d) { return d->phantom * 8 <= d->bit_count; }

static int ipx_restart(struct ipx_dc_decoder *d, struct ipx_component **scan, int ns) {
    if (!ipx_data_sufficed(d)) return 0;
    d->bits = 0;
    d->bit_count = 0;
    d->phantom = 0;
    while (d->p + 1 < d->end && d->p[0] == 0xFF && d->p[1] == 0xFF) d->p++;
    if (d->p + 1 >= d->end || d->p[0] != 0xFF || d->p[1] < 0xD0 || d->p[1] > 0xD7) return 0;
    d->p += 2;
    for (int i = 0; i < ns; i++) scan[i]->predictor = 0;
    return 1;
}

/* Whether the deadline passed (checked once per block row). */
static int ipx_past_deadline(const struct ipx_dc_decoder *d) {
    return d->deadline_ns > 0 && ipx_monotonic_ns() > d->deadline_ns;
}

/* DC predictors stay within what 8-bit samples can produce (|DC| < 2^11 per unit of Al); a file asking
   for more is damaged, and clamping keeps every later shift and sum defined. */
#define IPX_PREDICTOR_LIMIT (1 << 15)

/* One block's DC: the first bits (`refine` = 0) or one more bit (`refine` = 1). */
static int ipx_decode_block(struct ipx_dc_decoder *d, struct ipx_component *comp, int bx, int by, int al, int refine) {
    int16_t *slot = &comp->dc[(size_t)by * (size_t)comp->stride + (size_t)bx];
    if (refine) {
        if (ipx_bits(d, 1)) *slot = (int16_t)(*slot | (1 << al));
        return 1;
    }
    int size = ipx_decode_symbol(d, &d->dc_tables[comp->dc_table]);
    if (size < 0 || size > 11) return 0;
    int diff = 0;
    if (size) {
        diff = ipx_bits(d, size);
        if (diff < (1 << (size - 1))) diff -= (1 << size) - 1;
    }
    int predictor = comp->predictor + diff;
    if (predictor > IPX_PREDICTOR_LIMIT || predictor < -IPX_PREDICTOR_LIMIT) return 0;
    comp->predictor = predictor;
    long scaled = (long)predictor * (1L << al);
    *slot = (int16_t)(scaled > INT16_MAX ? INT16_MAX : scaled < INT16_MIN ? INT16_MIN : scaled);
    return 1;
}

/* The next symbol of `t`, the bits already filled (at least 16 of them): from the lookup when its code is
   short, else length by length (ITU T.81 F.16). -1: no such code (damage). */
static inline int ipx_next_symbol(struct ipx_dc_decoder *d, const struct ipx_huffman *t) {
    uint16_t entry = t->fast[d->bits >> (64 - IPX_FAST_BITS)];
    if (entry) {
        int length = entry >> 8;
        d->bits <<= length;
        d->bit_count -= length;
        return entry & 0xFF;
    }
    for (int length = IPX_FAST_BITS + 1; length <= 16; length++) {
        int32_t code = (int32_t)(d->bits >> (64 - length));
        if (t->maxcode[length] >= 0 && code <= t->maxcode[length]) {
            int index = t->valptr[length] + code - t->mincode[length];
            d->bits <<= length;
            d->bit_count -= length;
            return index < 256 ? t->values[index] : -1;
        }
    }
    return -1;
}

static int ipx_range_limit(long long idct);

/* Zigzag index -> the 1/4 decode's term (5 * row + column over rows and columns 0, 1, 3, 5, 7 of the block,
   the only ones libjpeg's 2x2 IDCT reads), or -1. */
static const signed char ipx_quarter_term[64] = {
    0,  1,  5,  -1, 6,  -1, 2,  -1, -1, 10, -1, 11, -1, 7,  -1, 3,  -1, -1, -1, -1, 15, -1, 16, -1, 12, -1, 8,  -1, 4,  -1, -1, -1,
    -1, -1, -1, 20, 21, -1, 17, -1, 13, -1, 9,  -1, -1, -1, -1, -1, -1, 22, -1, 18, -1, 14, -1, -1, -1, -1, 23, -1, 19, -1, -1, 24,
};

/* A block's 2x2 samples from its dequantised terms (`terms` as ipx_quarter_term lays them out): libjpeg's
   jpeg_idct_2x2 (jidctred.c: the same constants, 13 fraction bits, the same rounding and range limit), so
   a block whose terms are all read comes out as libjpeg's 1/4 decode makes it. */
static void ipx_idct_2x2(const long long terms[25], uint8_t *out, size_t stride) {
    /* sqrt(2) * (c1+c3+c5+c7), (-c1+c3-c5-c7), (-c1+c3+c5+c7), (c7-c5+c3-c1), in 13-bit fixed point */
    const long long odd1 = 29692, odd3 = -10426, odd5 = 6967, odd7 = -5906;
    long long work[2][5];
    for (int column = 0; column < 5; column++) {
        const long long *t = terms + column;
        long long even = t[0] * (1LL << 15);
        long long odd = t[5] * odd1 + t[10] * odd3 + t[15] * odd5 + t[20] * odd7;
        work[0][column] = (even + odd + (1LL << 12)) >> 13;
        work[1][column] = (even - odd + (1LL << 12)) >> 13;
    }
    for (int row = 0; row < 2; row++) {
        const long long *w = work[row];
        long long even = w[0] * (1LL << 15);
        long long odd = w[1] * odd1 + w[2] * odd3 + w[3] * odd5 + w[4] * odd7;
        out[row * stride] = (uint8_t)ipx_range_limit((even + odd + (1LL << 19)) >> 20);
        out[row * stride + 1] = (uint8_t)ipx_range_limit((even - odd + (1LL << 19)) >> 20);
    }
}

/* ipx_idct_2x2 of a block whose terms outside rows and columns 0 and 1 are all 0 (the same arithmetic with
   the zero products left out): t00 the DC, t01 the first horizontal, t10 the first vertical term. */
static void ipx_idct_2x2_low(long long t00, long long t01, long long t10, long long t11, uint8_t *out, size_t stride) {
    const long long odd1 = 29692;
    long long work[2][2];
    long long even = t00 * (1LL << 15), odd = t10 * odd1;
    work[0][0] = (even + odd + (1LL << 12)) >> 13;
    work[1][0] = (even - odd + (1LL << 12)) >> 13;
    even = t01 * (1LL << 15);
    odd = t11 * odd1;
    work[0][1] = (even + odd + (1LL << 12)) >> 13;
    work[1][1] = (even - odd + (1LL << 12)) >> 13;
    for (int row = 0; row < 2; row++) {
        even = work[row][0] * (1LL << 15);
        odd = work[row][1] * odd1;
        out[row * stride] = (uint8_t)ipx_range_limit((even + odd + (1LL << 19)) >> 20);
        out[row * stride + 1] = (uint8_t)ipx_range_limit((even - odd + (1LL << 19)) >> 20);
    }
}

/* One block of a sequential (baseline) scan: its DC coefficient kept, its AC coefficients stepped over as
   libjpeg's decode_mcu does when it needs only the DC term (each code and its magnitude bits read, the
   values dropped; an end-of-block code or the 63rd coefficient ends the block). */
static int ipx_decode_sequential_block(struct ipx_dc_decoder *d, struct ipx_component *comp, int bx, int by) {
    /* The bit buffer in locals (the compiler keeps them in registers), stored back before each refill. */
    uint64_t bits = d->bits;
    int count = d->bit_count;
#define IPX_REFILL_32()                   \
    if (count < 32) {                     \
        d->bits = bits;                   \
        d->bit_count = count;             \
        ipx_fill(d);                      \
        bits = d->bits;                   \
        count = d->bit_count;             \
    }
    /* An AC code the lookups do not hold (longer than IPX_FAST_BITS), decoded length by length; damage
       (no such code) ends the block's decode. */
#define IPX_LONG_AC_SYMBOL(symbol)        \
    d->bits = bits;                       \
    d->bit_count = count;                 \
    symbol = ipx_next_symbol(d, ac);      \
    bits = d->bits;                       \
    count = d->bit_count;                 \
    if (symbol < 0) return 0;
    /* A code is at most 16 bits and its magnitude at most 15: 32 bits in hand cover one coefficient. */
    IPX_REFILL_32()
    d->bits = bits;
    d->bit_count = count;
    int size = ipx_next_symbol(d, &d->dc_tables[comp->dc_table]);
    bits = d->bits;
    count = d->bit_count;
    if (size < 0 || size > 11) return 0;
    int diff = 0;
    if (size) {
        diff = (int)(bits >> (64 - size));
        bits <<= size;
        count -= size;
        if (diff < (1 << (size - 1))) diff -= (1 << size) - 1;
    }
    /* libjpeg stores the sum as a 16-bit coefficient; a sum outside that range is damage, left to it. */
    int predictor = comp->predictor + diff;
    if (predictor > INT16_MAX || predictor < INT16_MIN) return 0;
    comp->predictor = predictor;
    comp->dc[(size_t)by * (size_t)comp->stride + (size_t)bx] = (int16_t)predictor;
    const struct ipx_huffman *ac = &d->ac_tables[comp->ac_table];
    const uint16_t *skip = ac->skip;
    const uint16_t *multi = ac->multi;
    int k = 1;
    /* The 1/4 decode: the first `coefficients` in zigzag order (the later ones are taken as 0). */
    int values[64];
    int ended = 0;
    if (d->shrink == 4) {
        memset(values, 0, sizeof(int) * (size_t)d->coefficients);
        const int32_t *valued = ac->valued;
        while (k < d->coefficients) {
            IPX_REFILL_32()
            int32_t quick = valued[bits >> (64 - IPX_FAST_BITS)];
            if (quick) {
                int used = quick & 31;
                bits <<= used;
                count -= used;
                if (quick & IPX_VALUE_END) {
                    ended = 1;
                    break;
                }
                k += (quick >> 5) & 15;
                if (k < d->coefficients) values[k] = quick >> 16;
                k++;
                continue;
            }
            /* A code and magnitude longer than the lookup: the code first, then its bits. */
            int symbol;
            IPX_LONG_AC_SYMBOL(symbol)
            int run = symbol >> 4, magnitude = symbol & 15;
            if (!magnitude) {
                if (run != 15) {
                    ended = 1; /* end of block */
                    break;
                }
                k += 16;
                continue;
            }
            k += run;
            int value = (int)(bits >> (64 - magnitude));
            bits <<= magnitude;
            count -= magnitude;
            value -= value < (1 << (magnitude - 1)) ? (1 << magnitude) - 1 : 0;
            if (k < d->coefficients) values[k] = value;
            k++;
        }
    }
    while (!ended && k < 64) {
        IPX_REFILL_32()
        /* Several coefficients at once, when the index stays below 64 through all of them (so libjpeg's
           loop would not have stopped among them). */
        uint16_t several = multi[bits >> (64 - IPX_MULTI_BITS)];
        if (several && k + ((several >> 4) & 63) < 64) {
            int used = several & 15;
            bits <<= used;
            count -= used;
            if (several >> 10) break; /* end of block */
            k += (several >> 4) & 63;
            continue;
        }
        int advance;
        uint16_t entry = skip[bits >> (64 - IPX_FAST_BITS)];
        if (entry) {
            int length = entry >> 8;
            bits <<= length;
            count -= length;
            advance = entry & 0xFF;
        } else {
            int symbol;
            IPX_LONG_AC_SYMBOL(symbol)
            int run = symbol >> 4, magnitude = symbol & 15;
            bits <<= magnitude;
            count -= magnitude;
            advance = magnitude ? run + 1 : run == 15 ? 16 : 0;
        }
        if (!advance) break; /* end of block */
        k += advance;
    }
#undef IPX_REFILL_32
#undef IPX_LONG_AC_SYMBOL
    d->bits = bits;
    d->bit_count = count;
    if (d->shrink == 4) {
        size_t stride = (size_t)comp->samples_stride;
        uint8_t *quarter = comp->samples + (size_t)(2 * by) * stride + (size_t)(2 * bx);
        long long dc = (long long)predictor * comp->steps[0];
        if (d->coefficients <= 5) {
            /* At most the terms of rows and columns 0 and 1 (zigzag 1, 2 and 4; zigzag 3 is row 2, which the
               2x2 IDCT does not read). */
            int t01 = d->coefficients > 1 ? values[1] : 0, t10 = d->coefficients > 2 ? values[2] : 0;
            int t11 = d->coefficients > 4 ? values[4] : 0;
            if (!(t01 | t10 | t11)) {
                /* The DC term alone: jpeg_idct_2x2 gives all four samples the DC's 1x1 IDCT. */
                uint8_t sample = (uint8_t)ipx_range_limit((dc + 4) >> 3);
                quarter[0] = quarter[1] = quarter[stride] = quarter[stride + 1] = sample;
            } else {
                ipx_idct_2x2_low(dc, (long long)t01 * comp->steps[1], (long long)t10 * comp->steps[2],
                                 (long long)t11 * comp->steps[4], quarter, stride);
            }
        } else {
            long long terms[25] = {0};
            terms[0] = dc;
            for (int z = 1; z < d->coefficients; z++) {
                if (ipx_quarter_term[z] >= 0) terms[ipx_quarter_term[z]] = (long long)values[z] * comp->steps[z];
            }
            ipx_idct_2x2(terms, quarter, stride);
        }
    }
    return 1;
}

/* One block of the scan: a sequential scan's whole block, or a progressive DC scan's first bits or refinement. */
static int ipx_decode_scan_block(struct ipx_dc_decoder *d, struct ipx_component *comp, int bx, int by, int al, int refine) {
    return d->sequential ? ipx_decode_sequential_block(d, comp, bx, by) : ipx_decode_block(d, comp, bx, by, al, refine);
}

static int ipx_decode_dc_scan(struct ipx_dc_decoder *d, struct ipx_component **scan, int ns, int ah, int al) {
    int refine = ah != 0;
    d->bits = 0;
    d->bit_count = 0;
    d->phantom = 0;
    for (int i = 0; i < ns; i++) {
        scan[i]->predictor = 0;
        if (!refine && !d->dc_tables[scan[i]->dc_table].defined) return 0;
        if (d->sequential && !d->ac_tables[scan[i]->ac_table].defined) return 0;
        if (d->sequential) {
            ipx_build_lookups(&d->dc_tables[scan[i]->dc_table], 0);
            ipx_build_lookups(&d->ac_tables[scan[i]->ac_table], 1);
        }
        if (!refine && scan[i]->known_bits != -1) return 0; /* a repeated first DC scan */
        if (refine && (scan[i]->known_bits != ah || al != ah - 1)) return 0;
    }
    int until_restart = d->restart_interval; /* units left before the next restart marker */
    if (ns == 1) {
        struct ipx_component *comp = scan[0];
        for (int by = 0; by < comp->blocks_h; by++) {
            if (ipx_past_deadline(d)) return 2;
            for (int bx = 0; bx < comp->blocks_w; bx++) {
                if (d->restart_interval && --until_restart < 0) {
                    if (!ipx_restart(d, scan, ns)) return 0;
                    until_restart = d->restart_interval - 1;
                }
                if (!ipx_decode_scan_block(d, comp, bx, by, al, refine)) return 0;
            }
        }
    } else {
        int mcus_x = (d->width + 8 * d->hmax - 1) / (8 * d->hmax), mcus_y = (d->height + 8 * d->vmax - 1) / (8 * d->vmax);
        for (int my = 0; my < mcus_y; my++) {
            if (ipx_past_deadline(d)) return 2;
            for (int mx = 0; mx < mcus_x; mx++) {
                if (d->restart_interval && --until_restart < 0) {
                    if (!ipx_restart(d, scan, ns)) return 0;
                    until_restart = d->restart_interval - 1;
                }
                for (int i = 0; i < ns; i++) {
                    struct ipx_component *comp = scan[i];
                    for (int y = 0; y < comp->v; y++) {
                        for (int x = 0; x < comp->h; x++) {
                            if (!ipx_decode_scan_block(d, comp, mx * comp->h + x, my * comp->v + y, al, refine)) return 0;
                        }
                    }
                }
            }
        }
    }
    if (!ipx_data_sufficed(d)) return 0;
    for (int i = 0; i < ns; i++) scan[i]->known_bits = al;
    return 1;
}

static int ipx_start_scan(struct ipx_dc_decoder *d, const uint8_t *p, int length) {
    if (!d->count || length < 1) return 0;
    int ns = p[0];
    if (ns < 1 || ns > d->count || length < 4 + 2 * ns) return 0;
    struct ipx_component *scan[IPX_MAX_COMPONENTS];
    for (int i = 0; i < ns; i++) {
        scan[i] = NULL;
        for (int c = 0; c < d->count; c++) {
            if (d->comps[c].id == p[1 + 2 * i]) scan[i] = &d->comps[c];
        }
        if (!scan[i]) return 0;
        scan[i]->dc_table = p[2 + 2 * i] >> 4;
        scan[i]->ac_table = p[2 + 2 * i] & 15;
        if (scan[i]->dc_table > 3 || scan[i]->ac_table > 3) return 0;
        /* libjpeg latches the component's table at its first scan, and stops when there is none. */
        if (!scan[i]->latched) {
            if (!d->quant_defined[scan[i]->quant_table]) return 0;
            memcpy(scan[i]->steps, d->quant[scan[i]->quant_table], sizeof(scan[i]->steps));
            scan[i]->latched = 1;
        }
    }
    int ss = p[1 + 2 * ns], se = p[2 + 2 * ns], ah = p[3 + 2 * ns] >> 4, al = p[3 + 2 * ns] & 15;
    d->p = p + length;
    if (d->sequential) {
        /* One scan of every component, all 64 coefficients at full precision; anything else (a frame scanned
           component by component, which libjpeg buffers whole) is left to libjpeg. */
        if (ns != d->count || ss != 0 || se != 63 || ah != 0 || al != 0) return 0;
        int decoded = ipx_decode_dc_scan(d, scan, ns, 0, 0);
        if (decoded != 1) return decoded;
        d->p = ipx_next_marker(d->p, d->end);
        return 1;
    }
    if (ss != 0) {
        d->p = ipx_next_marker(d->p, d->end); /* an AC scan: not read */
        return 1;
    }
    if (se != 0 || al > 13) return 0;
    int decoded = ipx_decode_dc_scan(d, scan, ns, ah, al);
    if (decoded != 1) return decoded;
    /* Leftover bits are padding; the next marker follows (restart markers belong to this scan). */
    d->p = ipx_next_marker(d->p, d->end); /* the bit reader never reads past a marker */
    return 1;
}

static int ipx_dc_complete(const struct ipx_dc_decoder *d) {
    if (!d->count) return 0;
    for (int c = 0; c < d->count; c++) {
        if (d->comps[c].known_bits != 0) return 0;
    }
    return 1;
}

/* Reads every marker segment up to EOI, decoding the DC scans on the way. 1: done; 0: not this decoder's
   kind (or damaged); -1: out of memory; 2: past the deadline; 3: too many scans. */
static int ipx_read_dc(struct ipx_dc_decoder *d) {
    d->p = d->data;
    if (d->end - d->p < 4 || d->p[0] != 0xFF || d->p[1] != 0xD8) return 0;
    d->p += 2;
    for (;;) {
        while (d->p < d->end && *d->p == 0xFF && d->p + 1 < d->end && d->p[1] == 0xFF) d->p++;
        if (d->end - d->p < 2 || d->p[0] != 0xFF) return 0; /* truncated, or bytes where a marker belongs */
        int marker = d->p[1];
        if (marker == 0xD9) break;
        if (d->end - d->p < 4) return 0;
        int length = ipx_read16(d->p + 2) - 2;
        const uint8_t *segment = d->p + 4;
        if (length < 0 || segment + length > d->end) return 0;
        d->p = segment + length;
        int ok = 1;
        switch (marker) {
        case 0xC2:
            /* A progressive file's AC terms come in scans of their own: only its 1/8 image is made here. */
            if (d->shrink != 8) return 0;
            ok = ipx_start_frame(d, segment, length);
            d->progressive = 1;
            break;
        case 0xC0: /* baseline */
        case 0xC1: /* extended sequential, Huffman-coded (8-bit precision only: ipx_start_frame) */
            ok = ipx_start_frame(d, segment, length);
            d->sequential = 1;
            break;
        case 0xC4: ok = ipx_define_huffman(d, segment, length); break;
        case 0xDB: ok = ipx_define_quant(d, segment, length); break;
        case 0xDD: ok = length >= 2; if (ok) d->restart_interval = ipx_read16(segment); break;
        case 0xDA:
            /* The 1/4 image of a colour file without restart markers is left to libjpeg-turbo: its fast Huffman
               path runs there, and this decoder was only 3-5% faster on such files (bench/jpeg_dc, 2026-11-29:
               within the 10% for which we keep our own C); with restart markers, or grey, it is 13-23% faster.
               The plan does not ask it for them (SourceHeader.jpegQuarterDecodable); this is the same rule here. */
            if (d->shrink == 4 && d->count == 3 && d->restart_interval == 0) return 0;
            if (++d->scans > IPX_JPEG_MAX_SCANS) return 3;
            ok = d->progressive || d->sequential ? ipx_start_scan(d, segment, length) : 0;
            break;
        case 0xE2:
            if (length > 14 && memcmp(segment, "ICC_PROFILE\0", 12) == 0 && d->icc_chunks < 256) {
                int sequence = segment[12];
                if (sequence >= 1 && !d->icc_chunk[sequence - 1]) {
                    d->icc_chunk[sequence - 1] = segment + 14;
                    d->icc_length[sequence - 1] = (size_t)length - 14;
                    d->icc_chunks++;
                }
            }
            break;
        case 0xEE:
            if (length >= 12 && memcmp(segment, "Adobe", 5) == 0) d->adobe_transform = segment[11];
            break;
        default:
            /* Baseline, lossless, hierarchical or arithmetic frames, DNL: not this decoder's kind. */
            if ((marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) || marker == 0xDC) return 0;
            /* Restart markers or other stand-alone markers between segments: damage. */
            if ((marker >= 0xD0 && marker <= 0xD8) || marker == 0x01 || marker == 0x00) return 0;
            break;
        }
        if (ok != 1) return ok;
    }
    if (!ipx_dc_complete(d)) return 0; /* EOI before the DC scans ended */
    for (int c = 0; c < d->count; c++) {
        if (!d->comps[c].latched) return 0;
    }
    if (d->count == 3 && (d->adobe_transform == 0 || (d->comps[0].id == 'R' && d->comps[1].id == 'G' && d->comps[2].id == 'B'))) {
        return 0; /* RGB-coded: rare, left to libvips */
    }
    return 1;
}

/* The first frame header's figures: progressive or not, uniform sampling, and the coefficient buffer
 * libjpeg-turbo's jdcoefct.c would allocate (each component's blocks rounded up to its sampling factors). */
static void ipx_read_frame_layout(const uint8_t *segment, int length, int marker, struct ipx_jpeg_layout *layout) {
    if (length < 6) return;
    int height = ipx_read16(segment + 1), width = ipx_read16(segment + 3), count = segment[5];
    if (width <= 0 || height <= 0 || count < 1 || length < 6 + 3 * count) return;
    int hmax = 1, vmax = 1;
    for (int c = 0; c < count; c++) {
        int h = segment[7 + 3 * c] >> 4, v = segment[7 + 3 * c] & 15;
        if (h < 1 || h > 4 || v < 1 || v > 4) return; /* libjpeg refuses the frame */
        if (h > hmax) hmax = h;
        if (v > vmax) vmax = v;
    }
    long long bytes = 0;
    int uniform = 1;
    for (int c = 0; c < count; c++) {
        int h = segment[7 + 3 * c] >> 4, v = segment[7 + 3 * c] & 15;
        if (h != hmax || v != vmax) uniform = 0;
        long long blocks_w = ((long long)width * h + 8LL * hmax - 1) / (8LL * hmax);
        long long blocks_h = ((long long)height * v + 8LL * vmax - 1) / (8LL * vmax);
        blocks_w = (blocks_w + h - 1) / h * h;
        blocks_h = (blocks_h + v - 1) / v * v;
        bytes += blocks_w * blocks_h * 128;
    }
    layout->progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
    layout->components = count;
    layout->uniform_sampling = uniform;
    layout->coefficient_bytes = bytes;
}

/* The next marker after `p` as libjpeg's next_marker() finds it: bytes other than 0xFF are skipped
 * (libjpeg warns and discards them), fill bytes (0xFF runs) are swallowed, and 0xFF00 (stuffed data) is
 * stepped over. Returns the marker code (the byte after the 0xFFs) with *at just past it, or -1 at the end. */
static int ipx_libjpeg_next_marker(const uint8_t **at, const uint8_t *end) {
    const uint8_t *p = *at;
    for (;;) {
        const uint8_t *ff = p < end ? memchr(p, 0xFF, (size_t)(end - p)) : NULL;
        if (!ff) return -1;
        p = ff + 1;
        while (p < end && *p == 0xFF) p++;
        if (p >= end) return -1;
        int code = *p++;
        if (code != 0x00) {
            *at = p;
            return code;
        }
    }
}

int ipx_jpeg_read_layout(const void *buffer, size_t length, int limit, struct ipx_jpeg_layout *layout) {
    memset(layout, 0, sizeof(*layout));
    const uint8_t *p = buffer, *end = p + length;
    if (length < 4 || p[0] != 0xFF || p[1] != 0xD8) return -1;
    p += 2;
    int scans = 0, frame_seen = 0;
    /* Markers are read the way libjpeg reads them (jdmarker.c), so that no byte it skips or merely warns
     * about hides a scan from this count: stray bytes and fill bytes between segments, restart markers
     * and TEM anywhere (parameterless), entropy-coded data up to the next marker. The walk ends where
     * libjpeg stops: EOI, a second SOI, a marker libjpeg refuses, a truncated segment. */
    while (scans <= limit) {
        int marker = ipx_libjpeg_next_marker(&p, end);
        if (marker < 0 || marker == 0xD9 || marker == 0xD8) break;
        if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) continue;
        /* Markers libjpeg takes with a length: frames (C0-CF), DHT, DAC, SOS, DQT, DNL, DRI, APPn, COM;
         * for any other (DHP, EXP, JPGn, reserved) it stops with an error, and so does the walk. */
        if (marker < 0xC0 || marker == 0xDE || marker == 0xDF || (marker >= 0xF0 && marker <= 0xFD)) break;
        if (end - p < 2) break;
        int segment_length = ipx_read16(p) - 2;
        const uint8_t *segment = p + 2;
        if (segment_length < 0 || segment_length > end - segment) break;
        p = segment + segment_length;
        if (!frame_seen && marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
            frame_seen = 1;
            ipx_read_frame_layout(segment, segment_length, marker, layout);
        }
        if (marker == 0xDD && scans == 0 && segment_length >= 2) layout->restart_interval = ipx_read16(segment);
        if (marker == 0xDA) {
            scans++;
            /* A sequential frame whose first scan holds every component is one scan for libjpeg: it stops
             * with an error (JERR_EOI_EXPECTED, jdinput.c) at any further SOS, so nothing after this one
             * can make it work again and its entropy-coded data (the whole file) need not be walked. */
            if (scans == 1 && frame_seen && layout->components > 0 && !layout->progressive && segment_length >= 1 &&
                segment[0] == layout->components) {
                break;
            }
            /* Otherwise its entropy-coded data is skipped by the next marker search. */
        }
    }
    layout->scans = scans;
    /* One interleaved scan of a sequential frame is decoded row by row: no whole-image buffer. */
    if (!layout->progressive && scans <= 1) layout->coefficient_bytes = 0;
    return scans;
}

static uint8_t ipx_clamp(int value) { return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value); }

/* An IDCT output (before the +128 level shift) made an 8-bit sample as libjpeg's range-limit table does
   (jdmaster.c, prepare_range_limit_table, indexed with RANGE_MASK): clamped to 0...255 from -640 to 383,
   and wrapped around 1024 beyond, where only damaged or 16-bit-quantised data reaches. */
static int ipx_range_limit(long long idct) {
    int index = (int)(idct & 1023);
    return index < 128 ? index + 128 : index < 384 ? 255 : index < 896 ? 0 : index - 896;
}

/* A component's 1/8 plane from its DC terms: each block's IDCT of the DC term alone (libjpeg's
   jpeg_idct_1x1: the dequantised DC descaled by 3 bits, rounded), an 8-bit sample. */
static void ipx_make_eighth_samples(struct ipx_component *comp) {
    size_t blocks = (size_t)comp->stride * (size_t)comp->rows;
    for (size_t i = 0; i < blocks; i++) {
        comp->samples[i] = (uint8_t)ipx_range_limit(((long long)comp->dc[i] * (long long)comp->steps[0] + 4) >> 3);
    }
}

static void ipx_release(struct ipx_dc_decoder *d) {
    for (int c = 0; c < IPX_MAX_COMPONENTS; c++) {
        free(d->comps[c].dc);
        free(d->comps[c].samples);
    }
}

static int ipx_jpeg_decode_scaled_down(const void *buffer, size_t length, int shrink, int coefficients, int orientation,
                                       long long deadline_ns, VipsImage **out) {
    struct ipx_dc_decoder *d = calloc(1, sizeof(struct ipx_dc_decoder));
    if (!d) return -1;
    d->shrink = shrink;
    d->coefficients = coefficients < 1 ? 1 : coefficients > 64 ? 64 : coefficients;
    d->data = buffer;
    d->end = d->data + length;
    d->adobe_transform = -1;
    d->deadline_ns = deadline_ns;
    int status = ipx_read_dc(d);
    if (status != 1) {
        ipx_release(d);
        free(d);
        return status < 0 ? -1 : status == 0 ? 1 : status;
    }
    int width = (d->width + shrink - 1) / shrink, height = (d->height + shrink - 1) / shrink, bands = d->count;
    /* Into this thread's reused buffer when it fits (thread_buffer.c); every pixel is written below before
       the image is handed out. */
    VipsImage *image = ipx_thread_buffer_image(width, height, bands,
                                               bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB);
    if (!image) {
        ipx_release(d);
        free(d);
        return -1;
    }
    if (shrink == 8) {
        for (int c = 0; c < bands; c++) ipx_make_eighth_samples(&d->comps[c]);
    }
    /* The planes cover the image (the grid is padded to whole MCUs, and every component is sampled as the
       others: ipx_start_frame), so output pixel (x, y) is sample (x, y) of each plane. */
    size_t plane_stride = (size_t)d->comps[0].samples_stride;
    for (int y = 0; y < height; y++) {
        uint8_t *row = VIPS_IMAGE_ADDR(image, 0, y);
        const uint8_t *luma = d->comps[0].samples + (size_t)y * plane_stride;
        if (bands == 1) {
            memcpy(row, luma, (size_t)width);
            continue;
        }
        const uint8_t *blue = d->comps[1].samples + (size_t)y * plane_stride, *red = d->comps[2].samples + (size_t)y * plane_stride;
        for (int x = 0; x < width; x++) {
            /* JFIF YCbCr to RGB in 16.16 fixed point, rounded (as libjpeg's tables). */
            int l = luma[x], cb = blue[x] - 128, cr = red[x] - 128;
            row[3 * x] = ipx_clamp(l + ((91881 * cr + 32768) >> 16));
            row[3 * x + 1] = ipx_clamp(l + ((-22554 * cb - 46802 * cr + 32768) >> 16));
            row[3 * x + 2] = ipx_clamp(l + ((116130 * cb + 32768) >> 16));
        }
    }
    /* The ICC profile, when every chunk is present. */
    size_t icc_size = 0;
    int icc_complete = d->icc_chunks > 0;
    for (int i = 0; i < d->icc_chunks; i++) {
        if (!d->icc_chunk[i]) icc_complete = 0;
        else icc_size += d->icc_length[i];
    }
    if (icc_complete && icc_size) {
        uint8_t *icc = malloc(icc_size);
        if (icc) {
            size_t offset = 0;
            for (int i = 0; i < d->icc_chunks; i++) {
                memcpy(icc + offset, d->icc_chunk[i], d->icc_length[i]);
                offset += d->icc_length[i];
            }
            vips_image_set_blob_copy(image, VIPS_META_ICC_NAME, icc, icc_size);
            free(icc);
        }
    }
    if (orientation > 1) {
        vips_image_set_int(image, VIPS_META_ORIENTATION, orientation);
    }
    ipx_release(d);
    free(d);
    *out = image;
    return 0;
}

int ipx_jpeg_decode_eighth(const void *buffer, size_t length, int orientation, long long deadline_ns, VipsImage **out) {
    return ipx_jpeg_decode_scaled_down(buffer, length, 8, 1, orientation, deadline_ns, out);
}

int ipx_jpeg_decode_quarter(const void *buffer, size_t length, int coefficients, int orientation, long long deadline_ns,
                            VipsImage **out) {
    return ipx_jpeg_decode_scaled_down(buffer, length, 4, coefficients, orientation, deadline_ns, out);
}
