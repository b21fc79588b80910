#include "vips_shim.h"
#include <lcms2.h>
#include <string.h>

/* Whether an embedded ICC profile is sRGB, read by lcms2 (the library libvips itself colour-manages
 * with): an RGB profile whose description starts with "sRGB" ("sRGB IEC61966-2.1", the profile cameras,
 * Photoshop and most web JPEGs carry, in its v2 and v4 forms). Such a source's numbers are sRGB already:
 * converting them through the profile costs building an lcms transform per image (several milliseconds,
 * most of it inverting tone curves) and gives the same pixels. Anything else (Display P3, Adobe RGB,
 * CMYK, grey, an unreadable profile) returns 0 and is converted. */
int ipx_icc_is_srgb(const void *data, size_t length) {
    if (!data || length < 128 || length > (size_t)64 << 20) {
        return 0;
    }
    cmsHPROFILE profile = cmsOpenProfileFromMem(data, (cmsUInt32Number)length);
    if (!profile) {
        return 0;
    }
    int srgb = 0;
    if (cmsGetColorSpace(profile) == cmsSigRgbData) {
        char description[64] = {0};
        cmsUInt32Number written = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", description,
                                                         sizeof(description));
        srgb = written > 0 && strncmp(description, "sRGB", 4) == 0;
    }
    cmsCloseProfile(profile);
    return srgb;
}
