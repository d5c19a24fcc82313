/* Where the Hugging Face hub cache is, the token and offline mode, by the
 * rules of huggingface_hub (research/hf-cache.md). This is the provisioning
 * executable's own small copy; src/hf/location.c resolves the same for the
 * checks, and the two should be unified. */
#ifndef GPUGATE_PROVISION_HF_LOCATION_H
#define GPUGATE_PROVISION_HF_LOCATION_H

#include <stdbool.h>
#include <stddef.h>

/* os.path.expandvars(os.path.expanduser(v)): ~ and ~user, then $VAR and ${VAR}
 * (unknown variables stay as written). Caller frees. */
char *hfloc_expand(const char *v);
char *hfloc_home(void);       /* HF_HOME */
char *hfloc_hub_cache(void);  /* HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, $HF_HOME/hub */
/* HF_HUB_OFFLINE (1/on/yes/true), or TRANSFORMERS_OFFLINE when that is unset or empty. */
bool hfloc_offline(void);
/* HF_ENDPOINT without trailing slashes, else https://huggingface.co. Caller frees. */
char *hfloc_endpoint(void);
/* HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the file at HF_TOKEN_PATH ($HF_HOME/token).
 * *token is NULL when there is none. Returns 0, or -1 with err set (never the token). */
int hfloc_token(char **token, char *err, size_t err_size);

#endif
