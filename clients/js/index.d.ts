/** Options of an ImageProxy `/img` request (see the README's API table). */
export interface ImageOptions {
  /** Named presets of the server's configuration, applied in order; comma-separated or an array (`preset`). */
  preset?: string | string[];
  /** Output box width in CSS pixels (`w`). */
  width?: number;
  /** Output box height in CSS pixels (`h`). */
  height?: number;
  fit?: "contain" | "cover" | "fill" | "pad";
  /** Where `fit: "cover"` crops around (`g`). */
  gravity?: "centre" | "center" | "north" | "south" | "east" | "west" | "northeast" | "northwest" | "southeast" | "southwest" | "smart" | "face";
  /** Focal point `[x, y]`, fractions 0..1 (`fp`). */
  focalPoint?: [number, number];
  /** Rectangle `[x, y, w, h]` of the upright source, pixels (integers) or fractions (strings like "0.5"). */
  crop?: [number | string, number | string, number | string, number | string];
  format?: "auto" | "jpeg" | "jpg" | "png" | "webp" | "avif" | "gif" | "jxl";
  /** Encoder quality 1..100 (`q`). */
  quality?: number;
  /** Device pixel ratio 1..4. */
  dpr?: number;
  /** `RRGGBB` or `RRGGBBAA`, with or without `#` (`bg`). */
  background?: string;
  enlarge?: boolean;
  progressive?: boolean;
  /** Filter steps, e.g. `["grayscale", "round:20"]` (`filter`). */
  filters?: string[];
  /** A tiny blurred placeholder. */
  lqip?: boolean;
  /** A byte budget, 1024..10485760: JPEG, WebP and AVIF are encoded at lower qualities until they fit (`max_bytes`). */
  maxBytes?: number;
  /** `keep`: a wide-gamut (Display P3, Adobe RGB) source keeps its colour space and profile (`colour`). */
  colour?: "srgb" | "keep";
  /** A named overlay (watermark) of the server's configuration (`wm`). */
  watermark?: string;
  /** A per-request watermark image URL, when the server allows it (`wmurl`). */
  watermarkURL?: string;
  /** Text drawn over the image, at most 200 characters, when the server allows it (`text`). */
  text?: string;
  /** Text size in pixels, 6..200 (`text_size`). */
  textSize?: number;
  /** Text colour `RRGGBB` or `RRGGBBAA`, with or without `#` (`text_color`). */
  textColor?: string;
  /** Where the text sits (`text_g`). */
  textGravity?: "centre" | "center" | "north" | "south" | "east" | "west" | "northeast" | "northwest" | "southeast" | "southwest";
  /** Pixels in from the gravity's edges (`text_x`, `text_y`). */
  textX?: number;
  textY?: number;
  /** Text opacity 0..1 (`text_opacity`). */
  textOpacity?: number;
}

export function imagePath(source: string, options?: ImageOptions): string;
export function imageURL(base: string, source: string, options?: ImageOptions): string;
export function sign(pathAndQuery: string, key: string, crypto?: { subtle?: SubtleCrypto }): Promise<string>;
export function signedImageURL(
  base: string, source: string, options: ImageOptions | undefined, key: string, crypto?: { subtle?: SubtleCrypto },
): Promise<string>;

export interface ResponsiveImage {
  src: string;
  srcset: string;
  sizes: string;
}
export interface ResponsiveImageSpec {
  base: string;
  source: string;
  widths: number[];
  sizes?: string;
  options?: Omit<ImageOptions, "width">;
}
export function responsiveImage(spec: ResponsiveImageSpec): ResponsiveImage;
export function responsiveImage(spec: ResponsiveImageSpec & { key: string; subtle?: SubtleCrypto }): Promise<ResponsiveImage>;

export interface NextLoaderProps {
  src: string;
  width: number;
  quality?: number;
}
export function createNextLoader(settings: {
  base: string;
  sourceBase?: string;
  format?: ImageOptions["format"];
  options?: Omit<ImageOptions, "width" | "quality" | "format">;
  /** Preset name -> the width it makes: URLs then name only a preset (for servers in presets-only mode). */
  presets?: Record<string, number>;
}): (props: NextLoaderProps) => string;
/** The narrowest preset at least `width` wide, else the widest. */
export function presetForWidth(presets: Record<string, number>, width: number): string;

/** imgproxy URL options (compat.imgproxy): the resize meta-option, gravity, quality, format, further segments. */
export interface ImgproxyOptions {
  resizingType?: "fit" | "fill" | "fill-down" | "force" | "auto";
  width?: number;
  height?: number;
  enlarge?: boolean;
  gravity?: string;
  quality?: number;
  format?: "jpg" | "jpeg" | "png" | "webp" | "avif" | "gif";
  /** Further `name:args` segments, as imgproxy spells them. */
  advanced?: string[];
}
export function imgproxyPath(source: string, options?: ImgproxyOptions): string;
/** Signed as imgproxy signs (hex key and salt), or `insecure` without a key. */
export function imgproxyURL(
  base: string, source: string, options?: ImgproxyOptions,
  signing?: { key?: string; salt?: string; signatureSize?: number; subtle?: SubtleCrypto },
): Promise<string>;

/** thumbor URL options (compat.thumbor). */
export interface ThumborOptions {
  width?: number;
  height?: number;
  fitIn?: boolean;
  flipHorizontally?: boolean;
  flipVertically?: boolean;
  halign?: "left" | "center" | "right";
  valign?: "top" | "middle" | "bottom";
  smart?: boolean;
  /** e.g. ["quality(80)", "format(webp)"] */
  filters?: string[];
}
export function thumborPath(image: string, options?: ThumborOptions): string;
/** Signed as libthumbor signs (the security key), or `unsafe/` without one. */
export function thumborURL(base: string, image: string, options?: ThumborOptions, signing?: { securityKey?: string; subtle?: SubtleCrypto }): Promise<string>;
