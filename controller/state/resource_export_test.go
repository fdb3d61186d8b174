package state

// ResourceBlobPrefixForTest is where a model's resource content is kept.
func ResourceBlobPrefixForTest(uuid string) string { return resourceBlobPrefix + uuid + "/" }
