/* trees/<commit>.json listings from an untrusted cache: any bytes give one
 * of the listing states with a reason, never a crash; an accepted listing
 * is sorted, names every file once and finds each by its path. */
#include "fuzz.h"
#include "hf/listing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hf_listing l;
	hf_listing_parse((const char *)data, size, &l);
	if (l.state == HF_LISTING_OK) {
		if (l.problem)
			abort();
		for (size_t i = 0; i < l.n_files; i++) {
			if (i && strcmp(l.files[i - 1].path, l.files[i].path) > 0)
				abort(); /* sorted */
			const struct hf_listed_file *f = hf_listing_find(&l, l.files[i].path);
			if (!f || strcmp(f->path, l.files[i].path) != 0)
				abort();
			const char *h = hf_listed_hash(f);
			if (h && strlen(h) != 64 && strlen(h) != 40)
				abort();
		}
	} else if (l.state != HF_LISTING_NONE && (!l.problem || !*l.problem)) {
		abort(); /* every refusal says why */
	}
	hf_listing_free(&l);
	return 0;
}
