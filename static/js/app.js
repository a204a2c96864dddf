/* memoryweb dashboard behaviour. Pages work without it (links keep real hrefs, forms post);
   this adds htmx configuration, toasts, the subject switcher's auto-submit, the charts and
   the context-window bar's model pick.
   Other scripts hook in through `window.memoryweb` (see initCharts, toast). */
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  // htmx: swap 400 (form errors naming the field) and 422 into the page; keep other errors out
  // of the DOM but tell the person.
  if (window.htmx) {
    htmx.config.responseHandling = [
      { code: "204", swap: false },
      { code: "[23]..", swap: true },
      { code: "400|422", swap: true, error: false },
      { code: "[45]..", swap: false, error: true },
    ];
    htmx.config.historyCacheSize = 0; // pages hold CSRF tokens and live data: refetch on back
  }

  var TOAST_MS = 6000;

  function dismissLater(el) {
    if (el.dataset.timed) return;
    el.dataset.timed = "1";
    window.setTimeout(function () { el.remove(); }, el.classList.contains("toast-error") ? TOAST_MS * 2 : TOAST_MS);
  }

  function toast(text, level) {
    var box = document.getElementById("toasts");
    if (!box) return;
    var el = document.createElement("div");
    el.className = "toast toast-" + (level || "info");
    el.setAttribute("role", "status");
    el.textContent = text;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    el.appendChild(close);
    box.appendChild(el);
    dismissLater(el);
  }

  document.addEventListener("click", function (event) {
    var close = event.target.closest(".toast-close");
    if (close) close.parentElement.remove();
  });

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var text = status === 404 ? "That item no longer exists (or is not yours)."
      : status === 403 ? "Your session expired: reload the page and sign in again."
      : "Something went wrong (" + status + "). Try again.";
    toast(text, "error");
  });
  document.addEventListener("htmx:sendError", function () {
    toast("The server did not answer. Check your connection and try again.", "error");
  });

  // Plain (non-htmx) forms ask before destructive actions: <button data-confirm="…">.
  document.addEventListener("submit", function (event) {
    var button = event.submitter;
    if (button && button.dataset.confirm && !window.confirm(button.dataset.confirm)) event.preventDefault();
  });

  // The subject switcher navigates as soon as a subject is picked.
  document.addEventListener("change", function (event) {
    var form = event.target.closest("form[data-autosubmit]");
    if (form && event.target.tagName === "SELECT" && event.target.value) form.submit();
  });

  // Charts: <canvas data-chart="bar|line" data-source="ID"> reads JSON
  // {labels: [...], datasets: [{label, data}]} from <script type="application/json" id="ID">.
  var PALETTE = ["#3b5bdb", "#2b8a3e", "#e8590c", "#9c36b5", "#0c8599", "#c92a2a"];
  var charts = new Map();

  function initCharts(root) {
    if (!window.Chart) return;
    (root || document).querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var source = document.getElementById(canvas.dataset.source);
      if (!source) return;
      var spec = JSON.parse(source.textContent);
      if (charts.has(canvas)) charts.get(canvas).destroy();
      var type = canvas.dataset.chart;
      var stacked = canvas.dataset.stacked === "true";
      var chart = new Chart(canvas, {
        type: type,
        data: {
          labels: spec.labels,
          datasets: spec.datasets.map(function (d, i) {
            var colour = PALETTE[i % PALETTE.length];
            return {
              label: d.label, data: d.data, backgroundColor: colour + (type === "line" ? "33" : "cc"),
              borderColor: colour, borderWidth: type === "line" ? 2 : 0, fill: type === "line",
              cubicInterpolationMode: "monotone", pointRadius: 0, pointHitRadius: 8, borderRadius: 3,
            };
          }),
        },
        options: {
          responsive: true, maintainAspectRatio: false, animation: false,
          interaction: { mode: "index", intersect: false },
          plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
          scales: {
            x: {
              stacked: stacked, grid: { display: false },
              // ISO days ("2026-11-30") read as "11-30" on the axis; the tooltip keeps the full date
              ticks: { maxTicksLimit: 8, callback: function (value) { return String(this.getLabelForValue(value)).replace(/^\d{4}-/, ""); } },
            },
            y: { stacked: stacked, beginAtZero: true, ticks: { precision: 0 } },
          },
        },
      });
      charts.set(canvas, chart);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("#toasts .toast").forEach(dismissLater);
    // a phone's nav is one row that scrolls sideways: bring the current page's link into it
    document.querySelectorAll(".nav").forEach(function (nav) {
      var current = nav.querySelector("[aria-current=page]");
      if (!current || nav.scrollWidth <= nav.clientWidth) return;
      nav.scrollLeft += current.getBoundingClientRect().left - nav.getBoundingClientRect().left - nav.clientWidth / 3;
    });
    initCharts(document);
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    document.querySelectorAll("#toasts .toast").forEach(dismissLater);
    initCharts(event.target);
  });

  // Focus after an in-place update: when the swap replaces the focused control (a vote button,
  // a policy radio, an edit form's Save), focus lands on its counterpart in the new content —
  // same id, same name and value inside the same [id] container, same aria-label or text —
  // else on the new content's main control (data-focus-default) or first control, never on <body>.
  var FOCUSABLE = "[autofocus], a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select, textarea, [tabindex]";
  var lostFocus = null;

  function focusLost() {
    var active = document.activeElement;
    return !active || active === document.body || !active.isConnected;
  }

  function counterpart(root, key) {
    if (!root || !root.querySelectorAll) return null;
    var found = null;
    var candidates = [root].concat(Array.prototype.slice.call(root.querySelectorAll(key.tag)));
    candidates.some(function (el) {
      if (el.tagName.toLowerCase() !== key.tag) return false;
      var same = key.name ? el.getAttribute("name") === key.name && (el.value || "") === key.value
        : key.label ? el.getAttribute("aria-label") === key.label
        : key.text && el.textContent.trim() === key.text;
      if (same) found = el;
      return same;
    });
    return found;
  }

  function restoreFocus() {
    var lost = lostFocus;
    lostFocus = null;
    if (!lost || !focusLost()) return;
    var key = lost.key;
    var target = key.id && document.getElementById(key.id);
    var scope = lost.scope && document.getElementById(lost.scope);
    if (!target) target = counterpart(scope, key);
    lost.settled.some(function (root) { target = target || counterpart(root, key); return !!target; });
    if (!target) {
      var roots = (scope ? [scope] : []).concat(lost.settled);
      roots.some(function (root) {
        if (!root.isConnected) return false;
        // a row names its main control (data-focus-default: a fact row's Edit, not its checkbox)
        target = (root.querySelector && root.querySelector("[data-focus-default]"))
          || (root.matches && root.matches(FOCUSABLE) ? root : root.querySelector(FOCUSABLE));
        return !!target;
      });
    }
    if (target) target.focus({ preventScroll: !lost.scroll });
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var active = document.activeElement;
    var target = event.detail.target;
    if (!active || active === document.body || !target || !target.contains(active)) return;
    var scope = active.parentElement && active.parentElement.closest("[id]");
    lostFocus = {
      key: {
        tag: active.tagName.toLowerCase(), id: active.id || "", name: active.getAttribute("name") || "",
        value: active.value || "", label: active.getAttribute("aria-label") || "", text: active.textContent.trim(),
      },
      scope: scope && target.contains(scope) ? scope.id : (target.id || ""),
      settled: [],
    };
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (!lostFocus) return;
    if (!lostFocus.settled.length) window.setTimeout(restoreFocus, 0); // once every element settled
    if (event.target.isConnected && !event.target.closest("#toasts")) lostFocus.settled.push(event.target);
  });

  // The context-window bar (templates/dashboard/partials/context_window.html): picking another
  // model redraws it in place, with memory/dashboard/window.py's arithmetic (a share to a
  // tenth of a percent, rounded half up; segments in % of the window, or of the total when
  // the context is over it).
  function shareText(tokens, window_) {
    var tenths = Math.floor((tokens * 2000 + window_) / (2 * window_));
    if (tokens && !tenths) return "under 0.1 %";
    return Math.floor(tenths / 10) + "." + (tenths % 10) + " %";
  }
  function grouped(n) { return n.toLocaleString("en-US"); }

  function redrawWindow(meter) {
    var select = meter.querySelector("[data-window-select]");
    var option = select && select.selectedOptions[0];
    if (!option) return;
    var window_ = parseInt(option.dataset.tokens, 10);
    var total = parseInt(meter.dataset.total, 10);
    var text = grouped(total) + " of " + grouped(window_) + " tokens (" + shareText(total, window_) + ")";
    if (total > window_) text += ", " + grouped(total - window_) + " over the window";
    var bar = meter.querySelector("[role=meter]");
    var segments = meter.querySelectorAll(".window-seg");
    var sum = 0;
    segments.forEach(function (seg) { sum += parseInt(seg.dataset.tokens, 10); });
    var scale = Math.max(window_, sum);
    segments.forEach(function (seg) { seg.style.width = (100 * parseInt(seg.dataset.tokens, 10) / scale).toFixed(4) + "%"; });
    bar.setAttribute("aria-valuemax", String(window_));
    bar.setAttribute("aria-valuenow", String(Math.min(total, window_)));
    bar.setAttribute("aria-valuetext", text);
    meter.querySelector("[data-window-text]").textContent = text;
    meter.querySelectorAll("[data-window-share]").forEach(function (cell) {
      cell.textContent = shareText(parseInt(cell.dataset.tokens, 10), window_);
    });
    meter.classList.toggle("is-over", total > window_);
  }

  document.addEventListener("change", function (event) {
    var meter = event.target.matches("[data-window-select]") && event.target.closest("[data-window-meter]");
    if (meter) redrawWindow(meter);
  });

  window.memoryweb = { toast: toast, initCharts: initCharts, redrawWindow: redrawWindow };
})();
