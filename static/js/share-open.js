// A share link is /share/<key>/#<secret>: the secret never travels in a request line or a
// Referer. Post it once from the fragment, then drop the fragment from the address bar.
const form = document.getElementById("share-open");
const secret = decodeURIComponent(location.hash.slice(1));
if (form && secret) {
  history.replaceState(null, "", location.pathname);
  document.getElementById("share-secret").value = secret;
  form.submit();
}
