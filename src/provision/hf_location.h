/* What hf fetch needs from the Hugging Face environment. Where the hub cache,
 * the token file and offline mode are comes from src/hf/location.c, the same
 * resolver the checks and `gpugate hf where` use; this file adds only what
 * downloading needs on top: the endpoint and the token's value. */
#ifndef GPUGATE_PROVISION_HF_LOCATION_H
#define GPUGATE_PROVISION_HF_LOCATION_H

#include <stdbool.h>
#include <stddef.h>

#include "hf/location.h"

/* HF_ENDPOINT without trailing slashes, else https://huggingface.co. Caller frees. */
char *hfloc_endpoint(void);
/* HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the file at loc's token_path
 * (HF_TOKEN_PATH, $HF_HOME/token). loc: this process's location, from
 * hf_location_of_environ(environ, "", false, ...), which also tells the hub
 * cache and offline mode. *token is NULL when there is none. Returns 0, or
 * -1 with err set (never the token). */
int hfloc_token(const struct hf_location *loc, char **token, char *err, size_t err_size);

#endif
