/* The link graph page (templates/dashboard/graph.html): draws the notes and their typed links
   with cytoscape. The first drawing comes embedded in the page (#graph-initial); changing the
   size, archived notes or the centre fetches the JSON endpoint (data-source) and redraws,
   keeping the address bar in step so the view can be shared or reloaded.
   Note text is user data: it only ever reaches the DOM through textContent. */
(function () {
  "use strict";

  var KIND_COLOURS = {
    related: "#868e96",
    elaborates: "#3b5bdb",
    contradicts: "#c92a2a",
    causes: "#e8590c",
    same_topic: "#2b8a3e",
  };

  var LABELLED_HUBS = 20;

  var box = document.getElementById("graph");
  if (!box || !window.cytoscape) return;
  var panel = document.getElementById("graph-panel");
  var summary = document.getElementById("graph-summary");
  var unfocus = document.getElementById("graph-unfocus");
  var controls = document.getElementById("graph-controls");
  var focusInput = document.getElementById("graph-focus");
  var cy = null;

  function toast(text, level) {
    if (window.memoryweb && window.memoryweb.toast) window.memoryweb.toast(text, level);
  }

  function elements(data) {
    var out = [];
    // a small drawing labels every note with its gist (unlinked ones too: four bare dots say
    // nothing); a big one only its hubs, the rest read on hover
    var ranked = data.nodes.filter(function (n) { return data.nodes.length <= 80 || n.degree > 0; })
      .sort(function (a, b) { return b.degree - a.degree; });
    var labelled = {};
    ranked.slice(0, data.nodes.length > 80 ? LABELLED_HUBS : ranked.length).forEach(function (n) { labelled[n.id] = true; });
    data.nodes.forEach(function (n) {
      out.push({
        group: "nodes",
        data: {
          id: "n" + n.id, noteId: n.id, label: n.label, content: n.content, tags: n.tags,
          degree: n.degree, url: n.url, archived: n.archived, vote: n.vote_score,
        },
        classes: [n.archived ? "archived" : "", n.focus ? "focus" : "", labelled[n.id] ? "labelled" : ""].join(" ").trim(),
      });
    });
    data.edges.forEach(function (e) {
      out.push({
        group: "edges",
        data: { id: "e" + e.id, source: "n" + e.source, target: "n" + e.target, kind: e.kind, weight: e.weight, origin: e.origin },
      });
    });
    return out;
  }

  function styles(maxDegree) {
    var list = [
      {
        selector: "node",
        style: {
          "background-color": "#3b5bdb",
          width: "mapData(degree, 0, " + maxDegree + ", 12, 44)",
          height: "mapData(degree, 0, " + maxDegree + ", 12, 44)",
          label: "",
          "font-size": 9,
          color: "#343a40",
          "text-valign": "bottom",
          "text-margin-y": 3,
          "text-wrap": "ellipsis",
          "text-max-width": 120,
          "min-zoomed-font-size": 8,
        },
      },
      { selector: "node.labelled, node.focus, node.is-hover", style: { label: "data(label)" } },
      { selector: "node.archived", style: { "background-color": "#adb5bd" } },
      { selector: "node.focus", style: { "border-width": 4, "border-color": "#e8590c" } },
      { selector: "node.is-hover", style: { "border-width": 3, "border-color": "#212529", "z-index": 10 } },
      {
        selector: "edge",
        style: {
          width: "mapData(weight, 0, 1, 1, 5)",
          "curve-style": "bezier",
          "target-arrow-shape": "triangle",
          "arrow-scale": 0.7,
          opacity: 0.75,
        },
      },
      { selector: ".is-faded", style: { opacity: 0.12 } },
      { selector: ".is-hidden-kind", style: { display: "none" } },
    ];
    Object.keys(KIND_COLOURS).forEach(function (kind) {
      list.push({
        selector: 'edge[kind = "' + kind + '"]',
        style: { "line-color": KIND_COLOURS[kind], "target-arrow-color": KIND_COLOURS[kind] },
      });
    });
    return list;
  }

  function hiddenKinds() {
    var hidden = [];
    document.querySelectorAll(".graph-legend input[data-kind]").forEach(function (box) {
      if (!box.checked) hidden.push(box.dataset.kind);
    });
    return hidden;
  }

  function applyKindFilter() {
    if (!cy) return;
    var hidden = hiddenKinds();
    cy.edges().forEach(function (edge) {
      edge.toggleClass("is-hidden-kind", hidden.indexOf(edge.data("kind")) !== -1);
    });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showPanel(node) {
    panel.replaceChildren();
    var head = el("p", "small muted");
    head.appendChild(el("span", "mono", "n:" + node.data("noteId")));
    head.appendChild(document.createTextNode(
      " · " + node.data("degree") + " link" + (node.data("degree") === 1 ? "" : "s") +
      (node.data("archived") ? " · archived" : "") +
      (node.data("vote") ? " · votes " + Number(node.data("vote")).toFixed(2) : "")
    ));
    panel.appendChild(head);
    panel.appendChild(el("p", "graph-panel-text", node.data("content")));
    var tags = node.data("tags") || [];
    if (tags.length) {
      var row = el("div", "row");
      tags.forEach(function (t) { row.appendChild(el("span", "tag", t)); });
      panel.appendChild(row);
    }
    var kinds = {};
    node.connectedEdges().forEach(function (edge) {
      kinds[edge.data("kind")] = (kinds[edge.data("kind")] || 0) + 1;
    });
    var kindNames = Object.keys(kinds);
    if (kindNames.length) {
      panel.appendChild(el("p", "small muted", "Links here: " + kindNames.map(function (k) { return kinds[k] + " " + k; }).join(", ")));
    }
    var actions = el("div", "form-actions");
    var open = el("a", "btn btn-small btn-primary", "Open note");
    open.href = node.data("url");
    actions.appendChild(open);
    var centre = el("button", "btn btn-small", "Centre here");
    centre.type = "button";
    centre.addEventListener("click", function () { refocus(node.data("noteId")); });
    actions.appendChild(centre);
    panel.appendChild(actions);
  }

  function draw(data) {
    if (cy) cy.destroy();
    if (summary) summary.textContent = data.summary.text;
    var unlinked = document.getElementById("graph-unlinked");
    if (unlinked) unlinked.hidden = data.summary.linked_notes > 0;
    if (unfocus) unfocus.hidden = !data.summary.focus;
    if (focusInput) focusInput.value = data.summary.focus || "";
    var maxDegree = 1;
    data.nodes.forEach(function (n) { if (n.degree > maxDegree) maxDegree = n.degree; });
    cy = window.cytoscape({
      container: box,
      elements: elements(data),
      style: styles(maxDegree),
      minZoom: 0.1,
      maxZoom: 3,
      layout: {
        name: "cose",
        animate: false,
        randomize: true,
        fit: true,
        padding: 24,
        nodeRepulsion: function () { return 9000; },
        idealEdgeLength: function () { return 70; },
        numIter: data.nodes.length > 250 ? 600 : 1000,
      },
    });
    cy.on("mouseover", "node", function (event) {
      var node = event.target;
      var hood = node.closedNeighborhood();
      cy.elements().not(hood).addClass("is-faded");
      node.addClass("is-hover");
      showPanel(node);
    });
    cy.on("mouseout", "node", function (event) {
      cy.elements().removeClass("is-faded");
      event.target.removeClass("is-hover");
    });
    cy.on("tap", "node", function (event) {
      window.location.assign(event.target.data("url"));
    });
    applyKindFilter();
  }

  function load() {
    var params = new URLSearchParams(new FormData(controls));
    Array.from(params.keys()).forEach(function (key) { if (!params.get(key)) params.delete(key); });
    var query = params.toString();
    box.setAttribute("aria-busy", "true");
    return fetch(box.dataset.source + (query ? "?" + query : ""), {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (body) {
          if (!response.ok) {
            var message = body.error && body.error.message ? body.error.message
              : response.status === 404 ? "That note no longer exists (or is not yours)." : "The graph could not be loaded (" + response.status + ").";
            throw new Error(message);
          }
          return body;
        });
      })
      .then(function (data) {
        draw(data);
        window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
      })
      .catch(function (error) { toast(error.message, "error"); })
      .finally(function () { box.removeAttribute("aria-busy"); });
  }

  function refocus(noteId) {
    focusInput.value = noteId || "";
    load();
  }

  controls.addEventListener("submit", function (event) { event.preventDefault(); load(); });
  controls.addEventListener("change", function () { load(); });
  document.addEventListener("change", function (event) {
    if (event.target.matches(".graph-legend input[data-kind]")) applyKindFilter();
  });
  if (unfocus) {
    unfocus.addEventListener("click", function (event) {
      if (!event.target.closest("[data-unfocus]")) return;
      event.preventDefault();
      refocus("");
    });
  }

  var initial = document.getElementById(box.dataset.initial);
  if (initial) draw(JSON.parse(initial.textContent));
  else load();
})();
