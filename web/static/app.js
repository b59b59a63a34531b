// Vigil's dashboard: the little it needs beyond htmx. Every page works
// without it.
(function () {
  "use strict";

  // The browser's time zone, so that the server shows times in it.
  try {
    var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (tz) {
      var secure = location.protocol === "https:" ? "; Secure" : "";
      document.cookie = "vigil_tz=" + tz.replace(/[^A-Za-z0-9_+\/-]/g, "") + "; Path=/; Max-Age=31536000; SameSite=Lax" + secure;
      var shown = document.body && document.body.getAttribute("data-tz");
      // Signed in and the page was drawn in another zone: draw it again,
      // once (the cookie now matches).
      if (shown && shown !== tz && !sessionStorage.getItem("vigil-tz-reloaded")) {
        sessionStorage.setItem("vigil-tz-reloaded", "1");
        location.reload();
        return;
      }
    }
  } catch (e) { /* no Intl: times stay in UTC */ }

  document.documentElement.classList.add("js");

  // Copy buttons: data-copy names the element whose text or value to copy.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy]");
    if (!btn) return;
    var el = document.querySelector(btn.getAttribute("data-copy"));
    if (!el) return;
    var text = el.value !== undefined ? el.value : el.textContent;
    var done = function () {
      var label = btn.textContent;
      btn.textContent = "Copied";
      btn.classList.add("copied");
      setTimeout(function () { btn.textContent = label; btn.classList.remove("copied"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(el, done); });
    } else {
      fallbackCopy(el, done);
    }
  });

  function fallbackCopy(el, done) {
    if (el.select) {
      el.select();
    } else {
      var range = document.createRange();
      range.selectNodeContents(el);
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
    }
    try { if (document.execCommand("copy")) done(); } catch (e) { /* the text stays selected */ }
  }

  // Forms that destroy something ask first.
  document.addEventListener("submit", function (ev) {
    var msg = ev.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) ev.preventDefault();
  });

  // Selects that switch something submit their form on change.
  document.addEventListener("change", function (ev) {
    if (ev.target.matches("select[data-autosubmit]")) ev.target.form.submit();
  });

  // A live part that carries the ETag of what it shows (data-etag) sends
  // it with its own refresh; the server answers 304 when nothing changed,
  // and then the part stays as it is, not drawn again.
  document.addEventListener("htmx:configRequest", function (ev) {
    var elt = ev.detail.elt;
    var tag = elt && elt.getAttribute && elt.getAttribute("data-etag");
    if (tag) ev.detail.headers["If-None-Match"] = tag;
  });
  document.addEventListener("htmx:beforeSwap", function (ev) {
    if (ev.detail.xhr && ev.detail.xhr.status === 304) ev.detail.shouldSwap = false;
  });

  // A live region does not refresh while something in it is open (a
  // ping's body) or focused, so what a person reads does not move.
  document.addEventListener("htmx:beforeRequest", function (ev) {
    var live = ev.target.closest && ev.target.closest("[data-live]");
    if (!live || ev.target !== live) return;
    if (live.querySelector("details[open]") || live.contains(document.activeElement) && document.activeElement !== document.body) {
      ev.preventDefault();
    }
  });
})();
