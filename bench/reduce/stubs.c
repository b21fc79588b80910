/* The rest of the shim that reduce_across.c links against, unused by the benchmark. */
void *ipx_pixel_image(void) { return 0; }
void *ipx_jpeg_writer_new(void) { return 0; }
int ipx_jpeg_writer_write(void) { return 0; }
int ipx_jpeg_writer_finish(void) { return 0; }
void ipx_jpeg_writer_free(void) {}
void *ipx_thread_buffer_lend(void) { return 0; }
void ipx_thread_buffer_return(void) {}
