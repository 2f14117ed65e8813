// The desktop window's initialization script. It runs before the page's own scripts on
// every navigation, so it first checks that the page is Skald's own loopback origin: only
// there does it hand over the launch token. It lives in memory only, as a non-enumerable
// property the page takes once and deletes. The shell replaces the two placeholders
// below with JSON string literals.
(() => {
  const origin = __SKALD_ORIGIN__;
  const token = __SKALD_TOKEN__;
  if (window.location.origin !== origin) {
    return;
  }
  Object.defineProperty(window, '__skaldLaunchToken', {
    value: token,
    configurable: true,
    enumerable: false,
    writable: false,
  });
})();
