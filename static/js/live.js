/* memoryweb live updates. Opens /ws/live/ for the subject in <body data-subject-id> and turns
   server events into DOM events on <body>, which htmx elements listen to:

     <div hx-get="…/consent/queue/" hx-trigger="mw:pending from:body">…</div>

   Events: mw:pending (a memory waits for approval, or was decided), mw:jobs (a job was queued or finished),
   mw:memory (a fact, note, lesson or procedure changed), mw:documents (session-summary documents changed, or
   a summaries run was queued or finished); every event also fires mw:live with the server's
   message as `detail`. A small toast says what happened. The socket reconnects with
   exponential backoff (1 s doubling to 30 s, with jitter). Pages work without this script. */
(function () {
  "use strict";

  var body = document.body;
  var subjectId = parseInt(body.dataset.subjectId || "", 10);
  if (!window.WebSocket || !(subjectId > 0)) return;

  var DOM_EVENTS = {
    "pending.created": "mw:pending",
    "pending.decided": "mw:pending",
    "job.queued": "mw:jobs",
    "job.finished": "mw:jobs",
    "memory.changed": "mw:memory",
    "documents.changed": "mw:documents",
  };
  var JOB_LABELS = { consolidate: "Consolidation", summaries: "Session summaries" };
  var MIN_DELAY = 1000;
  var MAX_DELAY = 30000;
  var delay = MIN_DELAY;
  var socket = null;
  var closing = false;

  function toast(text, level) {
    if (!window.memoryweb || !window.memoryweb.toast) return;
    // a burst of events (one reflection queues several items) shows one toast, not a stack
    var shown = document.querySelectorAll("#toasts .toast");
    for (var i = 0; i < shown.length; i++) {
      if (shown[i].firstChild && shown[i].firstChild.textContent === text) return;
    }
    window.memoryweb.toast(text, level);
  }

  function toastFor(message) {
    var payload = message.payload || {};
    if (message.event === "pending.created") {
      toast("A new memory is waiting for your approval.", "warning");
    } else if (message.event === "job.finished") {
      // the Jobs page's list reloads on this event and says the outcome itself (an aria-live
      // region): a toast beside it would say it twice
      if (document.getElementById("jobs-list")) return;
      var kind = JOB_LABELS[payload.kind] || "A background job";
      if (payload.status === "failed") toast(kind + " failed; see Jobs.", "error");
      else toast(kind + " finished.", "success");
    }
  }

  function dispatch(message) {
    var name = DOM_EVENTS[message.event];
    if (name) body.dispatchEvent(new CustomEvent(name, { detail: message }));
    // a summaries run queued or ended (even one that wrote nothing) changes what the Documents page says
    if ((message.event === "job.queued" || message.event === "job.finished") && (message.payload || {}).kind === "summaries") {
      body.dispatchEvent(new CustomEvent("mw:documents", { detail: message }));
    }
    body.dispatchEvent(new CustomEvent("mw:live", { detail: message }));
    toastFor(message);
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + "/ws/live/");
    socket.addEventListener("open", function () {
      delay = MIN_DELAY;
      body.dataset.live = "open";
      socket.send(JSON.stringify({ action: "subscribe", subject_id: subjectId }));
    });
    socket.addEventListener("message", function (event) {
      var message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      if (message.type === "event") dispatch(message);
    });
    socket.addEventListener("close", function (event) {
      body.dataset.live = "closed";
      socket = null;
      // 4401 / a refused handshake: the session ended; reconnecting would not help
      if (closing || event.code === 4401) return;
      var wait = delay + Math.floor(Math.random() * 500);
      delay = Math.min(delay * 2, MAX_DELAY);
      window.setTimeout(connect, wait);
    });
  }

  window.addEventListener("pagehide", function () {
    closing = true;
    if (socket) socket.close();
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted && !socket) { closing = false; connect(); }
  });

  connect();
})();
