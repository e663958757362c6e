"use strict";
// The replay widget of quasistep's pages (tools/report/replay.cpp fills its data): qsReplay(root, D)
// draws the data D of one run inside the element root, with its own controls, and returns
// { frames, show(f), draw(f), selftest() }. A page may hold several (the Monte Carlo report).
function qsReplay(root, D, options) {
  options = options || {};
  var NS = "http://www.w3.org/2000/svg";

  function decode(b64, type) {
    var s = b64 ? atob(b64) : "", bytes = new Uint8Array(s.length);
    for (var i = 0; i < s.length; ++i) bytes[i] = s.charCodeAt(i);
    if (type === "i32") return new Int32Array(bytes.buffer);
    if (type === "u16") return new Uint16Array(bytes.buffer);
    return new Float32Array(bytes.buffer);
  }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v, d) { return Number(v).toFixed(d); }

  var F = D.frames, times = D.t ? decode(D.t) : null;
  function timeOf(f) { return times ? times[f] : D.t0 + f * D.h; }
  function div(cls, parent) {
    var e = document.createElement("div");
    e.className = cls;
    parent.appendChild(e);
    return e;
  }
  root.classList.add("qs-replay");
  if (D.stopped) div("stopped", root).textContent = "The run stopped: " + D.stopped;
  var viewsDiv = div("views", root);
  var controls = F > 1 ? div("controls", root) : null;
  var legend = div("legend", root);

  // A view: an SVG whose user units are metres with y (or z) up, over box [x0, x1] x [y0, y1]
  // (every body at every frame is inside it), and above it a band of BAND pixels that no body
  // enters, for the axes and gravity marks.
  var BAND = 34;
  function makeView(title, box, width) {
    var wrap = document.createElement("div");
    var cap = document.createElement("div");
    cap.className = "view-title";
    cap.textContent = title;
    wrap.appendChild(cap);
    var w = box[1] - box[0], h = box[3] - box[2];
    var height = Math.max(160, Math.min(560, width * h / w));
    // The band adds BAND px and BAND metres-per-pixel to the height: the scale stays px.
    var px = Math.max(w / width, h / height), top = box[3] + BAND * px;
    var svg = el("svg", { "class": "view", width: width, height: height + BAND,
      viewBox: box[0] + " " + (-top) + " " + w + " " + (top - box[2]), preserveAspectRatio: "xMidYMid meet" });
    wrap.appendChild(svg);
    viewsDiv.appendChild(wrap);
    var g = el("g", { transform: "scale(1,-1)" }, svg);  // y up
    // What the SVG shows: the viewBox centred, at px metres a pixel, with room to spare on
    // one axis; the marks go in its top-left corner.
    var cx = 0.5 * (box[0] + box[1]), cy = 0.5 * (top + box[2]);
    return { svg: svg, g: g, size: Math.max(w, h), box: box, px: px,
             left: cx - 0.5 * width * px, top: cy + 0.5 * (height + BAND) * px };
  }
  // Text whose baseline starts at (x, y) of a y-up view, 11 px high.
  function text(parent, x, y, s, px, attrs) {
    var t = el("text", { x: x, y: -y, transform: "scale(1,-1)", style: "font-size:" + 11 * px + "px" }, parent);
    for (var k in attrs || {}) t.setAttribute(k, attrs[k]);
    t.textContent = s;
    return t;
  }
  // The world's axes as a small grey glyph in the band's left corner, not as arrows at the
  // origin: red and green arrows there sat on the ground contact and read as impulses. The
  // glyph only says which way x and y (or z) point; the origin is where the scales start.
  function axesGlyph(view, xName, yName) {
    var p = view.px, x0 = view.left + 10 * p, y0 = view.top - 27 * p, L = 20 * p;
    var g = el("g", { "class": "axes-glyph" }, view.g);
    el("path", { d: "M" + (x0 + L) + " " + y0 + "L" + x0 + " " + y0 + "L" + x0 + " " + (y0 + L) +
      "M" + (x0 + L - 4 * p) + " " + (y0 + 3 * p) + "L" + (x0 + L) + " " + y0 + "L" + (x0 + L - 4 * p) + " " + (y0 - 3 * p) +
      "M" + (x0 - 3 * p) + " " + (y0 + L - 4 * p) + "L" + x0 + " " + (y0 + L) + "L" + (x0 + 3 * p) + " " + (y0 + L - 4 * p),
      "stroke-width": 1.2 * p }, g);
    text(g, x0 + L + 3 * p, y0 - 3 * p, xName, p);
    text(g, x0 + 5 * p, y0 + L - 6 * p, yName, p);
    return g;
  }
  // Gravity in the band, right of the axes: no body is drawn there at any frame.
  function gravityMark(view, value) {
    var p = view.px, gx = view.left + 56 * p, base = view.top - BAND * p;
    var g = el("g", { "class": "gravity-mark" }, view.g);
    arrow(g, "gravity", gx, base + 28 * p, 0, -22 * p, 7 * p, 1.5 * p);
    text(g, gx + 6 * p, base + 12 * p, "g = " + value + " m/s\u00b2", p);
    return g;
  }
  function arrow(parent, cls, x, y, dx, dy, head, width) {
    var len = Math.hypot(dx, dy);
    var g = el("g", { "class": cls }, parent);
    if (!(len > 0)) return g;
    var ux = dx / len, uy = dy / len, hx = Math.min(head, 0.5 * len);
    el("line", { x1: x, y1: y, x2: x + dx - ux * hx * 0.5, y2: y + dy - uy * hx * 0.5, "stroke-width": width }, g);
    var bx = x + dx - ux * hx, by = y + dy - uy * hx;
    el("polygon", { points: (x + dx) + "," + (y + dy) + " " + (bx - uy * hx * 0.4) + "," + (by + ux * hx * 0.4) + " " +
      (bx + uy * hx * 0.4) + "," + (by - ux * hx * 0.4), stroke: "none" }, g);
    return g;
  }
  function setArrow(g, x, y, dx, dy, head) {
    var line = g.firstChild, tip = g.lastChild, len = Math.hypot(dx, dy);
    if (!line || line === tip) return;
    if (!(len > 0)) { g.setAttribute("visibility", "hidden"); return; }
    g.setAttribute("visibility", "visible");
    var ux = dx / len, uy = dy / len, hx = Math.min(head, 0.5 * len);
    line.setAttribute("x1", x); line.setAttribute("y1", y);
    line.setAttribute("x2", x + dx - ux * hx * 0.5); line.setAttribute("y2", y + dy - uy * hx * 0.5);
    var bx = x + dx - ux * hx, by = y + dy - uy * hx;
    tip.setAttribute("points", (x + dx) + "," + (y + dy) + " " + (bx - uy * hx * 0.4) + "," + (by + ux * hx * 0.4) + " " +
      (bx + uy * hx * 0.4) + "," + (by - ux * hx * 0.4));
  }
  function pathOf(pts, close) {
    var s = "";
    for (var i = 0; i < pts.length; ++i) s += (i ? "L" : "M") + pts[i][0] + " " + pts[i][1];
    return s + (close ? "Z" : "");
  }
  // 2D convex hull (monotone chain) of [x, y] points.
  function hull2(pts) {
    pts = pts.slice().sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    if (pts.length < 3) return pts;
    function cross(o, a, b) { return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]); }
    var lower = [], upper = [];
    for (var i = 0; i < pts.length; ++i) {
      while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], pts[i]) <= 0) lower.pop();
      lower.push(pts[i]);
    }
    for (var j = pts.length - 1; j >= 0; --j) {
      while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], pts[j]) <= 0) upper.pop();
      upper.push(pts[j]);
    }
    upper.pop(); lower.pop();
    return lower.concat(upper);
  }

  var draw;  // draw(frame): the world at row `frame`
  var width = options.width || Math.min(900, Math.max(480, (root.clientWidth || window.innerWidth) - 20));

  if (D.world !== "body_on_plane") {
    // ---- planar worlds: vertical (from the side) and tabletop (from above) ----
    var view = makeView(D.world === "vertical" ? "from the side (x right, y up; m)" : "from above (x right, y up; m)",
                        D.bounds, width);
    var size = view.size, lw = view.px;  // one screen pixel in metres
    var poses = decode(D.poses), moving = D.moving, M = moving.length;
    var B = D.bodies.length, J = D.joints.length;
    var DEG = 57.29577951308232;
    // Half-planes first (they are the ground), as big polygons clipped by the view.
    var L = 20 * size;
    D.bodies.forEach(function (b, bi) {
      b.shapes.forEach(function (s) {
        if (s.type !== "half_plane") return;
        var p = s.points[0], n = s.normal, tx = -n[1], ty = n[0];
        var pts = [[p[0] - L * tx, p[1] - L * ty], [p[0] + L * tx, p[1] + L * ty],
                   [p[0] + L * tx - L * n[0], p[1] + L * ty - L * n[1]], [p[0] - L * tx - L * n[0], p[1] - L * ty - L * n[1]]];
        s.group = el("g", { "class": "halfplane-group" }, view.g);
        el("path", { d: pathOf(pts, true), "class": "halfplane", "stroke-width": lw }, s.group);
        s.body = bi;
      });
    });
    // A plan's regions (a scene's plan section): keep-out boxes at their size, each with its
    // margin as a faint dashed box around it (what the body's origin may not enter), under the
    // bodies; and the goal region of the goal body's origin, over them (drawn below, after the
    // contacts: a body that reaches the goal would hide it), with the path that origin takes.
    function region(r, parent) {
      var g = el("g", { "class": "region " + r.kind, "data-region-body": r.body }, parent), b = r.box, e = r.margin || 0;
      el("rect", { x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1], "stroke-width": 1.5 * lw,
        "stroke-dasharray": r.kind === "goal" ? 5 * lw + " " + 3 * lw : "none" }, g);
      if (e > 0) el("rect", { "class": "margin", x: b[0] - e, y: b[1] - e, width: b[2] - b[0] + 2 * e, height: b[3] - b[1] + 2 * e,
        "stroke-width": lw, "stroke-dasharray": 4 * lw + " " + 3 * lw }, g);
      // The name above the box, outside it (a keep-out box may be narrower than its name).
      var t = text(g, b[0], b[3] + 4 * lw, (r.kind === "goal" ? "goal: " : "keep out: ") + r.body, lw, { "class": "region-label", "stroke-width": 3 * lw });
      var tw = (t.getComputedTextLength && t.getComputedTextLength()) || 6.5 * lw * t.textContent.length;
      regionLabels.push([b[0], b[0] + tw, b[3] + 2 * lw, b[3] + 15 * lw]);
    }
    var regionLabels = [];  // the boxes of the regions' names, which the bodies' names avoid
    (D.regions || []).forEach(function (r) { if (r.kind !== "goal") region(r, view.g); });
    var goalRegion = (D.regions || []).filter(function (r) { return r.kind === "goal"; })[0];
    if (goalRegion) {
      var gb = D.bodies.map(function (b) { return b.name; }).indexOf(goalRegion.body), gi = D.moving.indexOf(gb);
      var trailPoses = poses, trail = [];
      for (var tf = 0; gi >= 0 && tf < D.frames; ++tf)
        trail.push([trailPoses[(tf * D.moving.length + gi) * 3], trailPoses[(tf * D.moving.length + gi) * 3 + 1]]);
      if (trail.length > 1) el("path", { "class": "trail", d: pathOf(trail), "stroke-width": 1.2 * lw }, view.g);
    }
    // Rails of the joints (prismatic: the range the replay covers, dashed).
    var rails = D.joints.map(function (j) {
      var g = el("g", { "class": "joint", "data-joint": j.name }, view.g);
      if (j.type === "prismatic") {
        el("line", { "class": "rail", "stroke-dasharray": 4 * lw + " " + 3 * lw, x1: j.axis[0] * j.range[0], y1: j.axis[1] * j.range[0],
          x2: j.axis[0] * j.range[1], y2: j.axis[1] * j.range[1], "stroke-width": lw }, g);
      } else {
        el("circle", { "class": "rail", cx: 0, cy: 0, r: 6 * lw, "stroke-width": lw }, g);
      }
      return g;
    });
    // Bodies: one group each, moved by a transform per frame.
    var groups = D.bodies.map(function (b) {
      var g = el("g", { "class": "body " + b.kind, "data-body": b.name }, view.g);
      b.shapes.forEach(function (s) {
        if (s.type === "half_plane") return;
        if (s.type === "disk") el("circle", { cx: s.points[0][0], cy: s.points[0][1], r: s.radius, "stroke-width": lw }, g);
        else if (s.type === "point") el("circle", { "class": "point-shape", cx: s.points[0][0], cy: s.points[0][1], r: 3 * lw, "stroke-width": lw }, g);
        else if (s.type === "polygon") el("polygon", { points: s.points.map(function (q) { return q[0] + "," + q[1]; }).join(" "),
          "stroke-width": lw }, g);
        else if (s.type === "segment" || s.type === "capsule") {
          // Two strokes, the outline's colour under the fill's, so that a capsule or segment
          // finger has its body kind's colours as every other shape does (a segment, which
          // has no thickness, 2 px wide).
          var a = s.points[0], c = s.points[1], r = s.radius > 0 ? s.radius : lw;
          el("path", { d: pathOf([a, c]), "class": "capsule-edge", "stroke-width": 2 * r + 2 * lw, "stroke-linecap": "round" }, g);
          el("path", { d: pathOf([a, c]), "class": "capsule-core", "stroke-width": 2 * r, "stroke-linecap": "round" }, g);
        }
      });
      // The body frame's origin: a small cross.
      el("path", { "class": "origin", d: "M" + (-3 * lw) + " 0L" + (3 * lw) + " 0M0 " + (-3 * lw) + "L0 " + (3 * lw), stroke: "#333",
        "stroke-width": lw * 0.8 }, g);
      return g;
    });
    axesGlyph(view, "x", "y");
    if (D.world === "vertical") gravityMark(view, D.gravity);
    // Contacts: a pool of marks reused every frame.
    var contactLayer = el("g", { "class": "contacts" }, view.g);
    var penLayer = el("g", { "class": "penetrations" }, view.g);
    (D.regions || []).forEach(function (r) { if (r.kind === "goal") region(r, view.g); });
    // Each body's name next to it, over everything else, placed again at every frame.
    var labelLayer = el("g", { "class": "labels" }, view.g);
    var labelH = 11 * lw, gap = 3 * lw;
    var extents = D.bodies.map(function (b) {  // disks [x, y, r] whose union bounds the shapes
      var out = [];
      b.shapes.forEach(function (s) {
        if (s.type === "half_plane") return;
        // As drawn: the outline's stroke reaches past the shape (a segment is 2 px wide).
        var r = s.type === "point" ? 3.5 * lw : s.type === "segment" ? 2 * lw : s.radius + lw;
        s.points.forEach(function (q) { out.push([q[0], q[1], r]); });
      });
      return out;
    });
    var labels = D.bodies.map(function (b, bi) {
      var plane = b.shapes.filter(function (s) { return s.type === "half_plane"; })[0];
      if (!extents[bi].length && !plane) return null;  // no shape (a carriage): nothing to name
      var t = text(labelLayer, 0, 0, b.name, lw, { "class": "body-label", "data-label": b.name, "stroke-width": 3 * lw });
      var w = t.getComputedTextLength ? t.getComputedTextLength() : 0;
      return { t: t, w: w > 0 ? w : 6.5 * lw * b.name.length, plane: extents[bi].length ? null : plane };
    });
    var bodyPose = D.bodies.map(function (b) { return b.pose.slice(); });
    function boxOf(bi) {
      var p = bodyPose[bi], c = Math.cos(p[2]), s = Math.sin(p[2]), e = extents[bi], bb = [Infinity, -Infinity, Infinity, -Infinity];
      for (var i = 0; i < e.length; ++i) {
        var x = p[0] + c * e[i][0] - s * e[i][1], y = p[1] + s * e[i][0] + c * e[i][1], r = e[i][2];
        bb[0] = Math.min(bb[0], x - r); bb[1] = Math.max(bb[1], x + r);
        bb[2] = Math.min(bb[2], y - r); bb[3] = Math.max(bb[3], y + r);
      }
      return e.length ? bb : null;
    }
    function meets(a, b) { return a[0] < b[1] && b[0] < a[1] && a[2] < b[3] && b[2] < a[3]; }
    function placeLabels(marks) {
      var boxes = D.bodies.map(function (b, bi) { return boxOf(bi); }), taken = regionLabels.slice(), vb = view.box;
      for (var bi = 0; bi < labels.length; ++bi) {
        var L = labels[bi];
        if (!L) continue;
        var x, y;
        if (L.plane) {
          // A half-plane (the ground): at the view's left edge, just inside its solid side.
          var p = bodyPose[bi], c = Math.cos(p[2]), s = Math.sin(p[2]), q = L.plane.points[0], n = L.plane.normal;
          var px0 = p[0] + c * q[0] - s * q[1], py0 = p[1] + s * q[0] + c * q[1], nx = c * n[0] - s * n[1], ny = s * n[0] + c * n[1];
          if (Math.abs(ny) > 0.3) { x = Math.max(view.left, vb[0] - 0.5 * size) + 8 * lw; y = py0 + (nx * (px0 - x)) / ny; }
          else { y = vb[2] + 8 * lw; x = px0 + (ny * (py0 - y)) / nx; }
          x -= nx * 4 * lw; y -= ny * 4 * lw + (ny > 0 ? labelH : 0);
        } else {
          // Above the body, else right, left, below: the first place clear of the other
          // bodies, the labels placed and this frame's contacts, and inside the view.
          var bb = boxes[bi], cx = 0.5 * (bb[0] + bb[1]) - 0.5 * L.w, cy = 0.5 * (bb[2] + bb[3]) - 0.5 * labelH;
          var spots = [[cx, bb[3] + gap], [bb[1] + gap, cy], [bb[0] - gap - L.w, cy], [cx, bb[2] - gap - labelH]];
          // Where none is clear, the one that covers least: a body, then a label, then a mark.
          var best = Infinity;
          for (var k = 0; k < spots.length && best > 0; ++k) {
            var r = [spots[k][0], spots[k][0] + L.w, spots[k][1], spots[k][1] + labelH];
            var cost = r[0] >= vb[0] && r[1] <= vb[1] && r[2] >= vb[2] && r[3] <= vb[3] ? 0 : 8;
            for (var o = 0; o < boxes.length; ++o) if (o !== bi && boxes[o] && meets(r, boxes[o])) cost += 4;
            for (var u = 0; u < taken.length; ++u) if (meets(r, taken[u])) cost += 2;
            for (var mk = 0; mk < marks.length; ++mk) if (meets(r, marks[mk])) cost += 1;
            if (cost < best) { best = cost; x = spots[k][0]; y = spots[k][1]; }
          }
        }
        taken.push([x, x + L.w, y, y + labelH]);
        L.t.setAttribute("x", x);
        L.t.setAttribute("y", -(y + 0.22 * labelH));  // the baseline, above the descenders
      }
    }
    var coff = decode(D.contacts.offsets, "i32"), cdat = decode(D.contacts.data);
    var poff = decode(D.penetrations.offsets, "i32"), pdat = decode(D.penetrations.data);
    var pool = [], penPool = [];
    var scale = D.impulse_scale > 0 ? 0.15 * size / D.impulse_scale : 0;  // m per N s
    var normalLen = 0.05 * size, head = 7 * lw;
    function contactMark(i) {
      while (pool.length <= i) {
        var g = el("g", { "class": "contact-mark" }, contactLayer);
        var cone = el("path", { "class": "cone", "stroke-width": 0.6 * lw }, g);
        var nrm = arrow(g, "normal", 0, 0, 1, 0, head, lw);
        var imp = arrow(g, "impulse", 0, 0, 1, 0, head, 2 * lw);
        var dot = el("circle", { "class": "contact", r: 2.5 * lw }, g);
        pool.push({ g: g, cone: cone, nrm: nrm, imp: imp, dot: dot });
      }
      return pool[i];
    }
    function penMark(i) {
      while (penPool.length <= i) penPool.push(el("circle", { "class": "penetration", r: 6 * lw, "stroke-width": 1.5 * lw }, penLayer));
      return penPool[i];
    }
    // Fixed bodies are placed once; the others each frame. A joint's frame is its parent's
    // pose, then its origin.
    var place = D.bodies.map(function (b) {
      return "translate(" + b.pose[0] + " " + b.pose[1] + ") rotate(" + b.pose[2] * DEG + ")";
    });
    place.forEach(function (p, b) { groups[b].setAttribute("transform", p); });
    // A half-plane moves with its body (a ground may be posed or tilted).
    var planes = [];
    D.bodies.forEach(function (b, bi) {
      b.shapes.forEach(function (s) {
        if (!s.group) return;
        s.group.setAttribute("transform", place[bi]);
        if (moving.indexOf(bi) >= 0) planes.push(s);
      });
    });
    var origin = D.joints.map(function (j) {
      return " translate(" + j.origin[0] + " " + j.origin[1] + ") rotate(" + j.origin[2] * DEG + ")";
    });
    var cslot = decode(D.contacts.slot, "u16");
    draw = function (f) {
      for (var i = 0; i < M; ++i) {
        var o = (f * M + i) * 3, b = moving[i];
        place[b] = "translate(" + poses[o] + " " + poses[o + 1] + ") rotate(" + poses[o + 2] * DEG + ")";
        groups[b].setAttribute("transform", place[b]);
        bodyPose[b][0] = poses[o]; bodyPose[b][1] = poses[o + 1]; bodyPose[b][2] = poses[o + 2];
      }
      for (var h = 0; h < planes.length; ++h) planes[h].group.setAttribute("transform", place[planes[h].body]);
      for (var j = 0; j < J; ++j) {
        var parent = D.joints[j].parent;
        rails[j].setAttribute("transform", (parent >= 0 ? place[parent] : "") + origin[j]);
      }
      var n = 0, marks = [], mh = 0.5 * normalLen;
      for (var c = coff[f]; c < coff[f + 1]; ++c, ++n) {
        var r = c * 5, m = contactMark(n), slot = D.slots[cslot[c]];
        var px = cdat[r], py = cdat[r + 1], nx = Math.cos(cdat[r + 2]), ny = Math.sin(cdat[r + 2]);
        m.g.setAttribute("visibility", "visible");
        m.dot.setAttribute("cx", px); m.dot.setAttribute("cy", py);
        marks.push([px - mh, px + mh, py - mh, py + mh]);
        setArrow(m.nrm, px, py, nx * normalLen, ny * normalLen, head);
        var mu = slot ? slot.mu : 0, cl = 0.6 * normalLen, tx = -ny, ty = nx;
        m.cone.setAttribute("d", "M" + px + " " + py + "L" + (px + cl * (nx + mu * tx)) + " " + (py + cl * (ny + mu * ty)) +
          "L" + (px + cl * (nx - mu * tx)) + " " + (py + cl * (ny - mu * ty)) + "Z");
        var pn = cdat[r + 3], pt = cdat[r + 4];
        setArrow(m.imp, px, py, scale * (pn * nx + pt * tx), scale * (pn * ny + pt * ty), head);
      }
      for (var u = n; u < pool.length; ++u) pool[u].g.setAttribute("visibility", "hidden");
      var np = 0;
      for (var e = poff[f]; e < poff[f + 1]; ++e, ++np) {
        var pm = penMark(np);
        pm.setAttribute("cx", pdat[e * 3]); pm.setAttribute("cy", pdat[e * 3 + 1]);
        pm.setAttribute("visibility", "visible");
      }
      for (var w = np; w < penPool.length; ++w) penPool[w].setAttribute("visibility", "hidden");
      placeLabels(marks);
      return n;
    };
    // The legend: what the marks mean, and the impulse arrows' scale.
    var items = [];
    if (D.has_forces) {
      var barPx = 60, barN = D.impulse_scale > 0 ? barPx * view.px / scale : 0;
      items.push('<svg width="70" height="12"><line x1="2" y1="6" x2="56" y2="6" stroke="#d35400" stroke-width="2"/>' +
                 '<polygon points="62,6 54,2 54,10" fill="#d35400"/></svg> impulse of the step: this arrow is ' +
                 (barN > 0 ? barN.toPrecision(3) : "0") + " " + D.impulse_unit);
      items.push('<svg width="20" height="12"><path d="M2 11L10 1L18 11Z" fill="#8e44ad" fill-opacity="0.15" stroke="#8e44ad"/></svg> friction cone (mu of the pair)');
      items.push('<svg width="20" height="12"><line x1="10" y1="11" x2="10" y2="2" stroke="#111"/></svg> contact normal, at the step\'s linearisation point');
    } else if (F > 1) {
      items.push("no forces file: contacts are not shown (quasistep run --forces, then render --forces)");
    }
    if (D.regions) {
      var keepOut = D.regions.some(function (r) { return r.kind === "keep_out"; });
      items.push((keepOut ? '<svg width="26" height="16"><rect x="1" y="1" width="24" height="14" fill="none" stroke="#c0392b" stroke-opacity="0.55" stroke-dasharray="3 2"/>' +
        '<rect x="5" y="4" width="16" height="8" fill="#e74c3c" fill-opacity="0.12" stroke="#c0392b"/></svg> keep-out box; dashed around it, the box grown by its margin, which the body\'s origin may not enter \u00b7 ' : "") +
        '<svg width="20" height="12"><rect x="1" y="1" width="18" height="10" fill="#27ae60" fill-opacity="0.12" stroke="#1e8449" stroke-dasharray="4 2"/></svg> goal region (drawn over the bodies) \u00b7 ' +
        '<svg width="20" height="12"><line x1="1" y1="6" x2="19" y2="6" stroke="#1e8449" stroke-width="1.2"/></svg> the goal body\'s path');
    }
    if (F > 1 || (D.penetrations && D.penetrations.data)) items.push('<svg width="16" height="16"><circle cx="8" cy="8" r="6" fill="none" stroke="#e00" stroke-width="1.5"/></svg> a gap below zero (penetration) at this state');
    legend.innerHTML = items.map(function (s) { return "<div>" + s + "</div>"; }).join("");
  } else {
    // ---- one rigid body on a plane (Xie & Chakraborty 2021): from above and from the side ----
    var P = decode(D.poses3), V = D.vertices, ecp = decode(D.ecp);
    var top = makeView("from above (x right, y up; m)", D.bounds_top, Math.min(440, width / 2 - 10));
    var side = makeView("from the side (x right, z up; m)", D.bounds_side, Math.min(440, width / 2 - 10));
    var lwT = top.px, lwS = side.px;
    el("line", { "class": "plane", x1: D.bounds_side[0] - side.size, y1: 0, x2: D.bounds_side[1] + side.size, y2: 0,
      "stroke-width": 2 * lwS }, side.g);
    axesGlyph(top, "x", "y");
    axesGlyph(side, "x", "z");
    gravityMark(side, D.gravity);
    // A body listed as an orthogonal prism (the T-bar) is drawn as that prism: its two caps and
    // the faces between them filled as one shape, its edges stroked; the convex hull the
    // stepper uses is then a dashed outline. Any other body is drawn as that hull.
    var prism = D.prism && D.prism.length === 2 ? D.prism : null;
    var stepperTop = prism ? el("path", { "class": "stepper-hull", "stroke-width": lwT, "stroke-dasharray": 4 * lwT + " " + 3 * lwT }, top.g) : null;
    var stepperSide = prism ? el("path", { "class": "stepper-hull", "stroke-width": lwS, "stroke-dasharray": 4 * lwS + " " + 3 * lwS }, side.g) : null;
    var hullTop = el("path", { "class": "hull body free", "data-body": D.body3_name, "stroke-width": lwT }, top.g);
    var hullSide = el("path", { "class": "hull", "stroke-width": lwS }, side.g);
    var feet = el("g", { "class": "footprint" }, top.g);
    var ecpTop = el("circle", { "class": "ecp", r: 4 * lwT }, top.g);
    var ecpSide = el("circle", { "class": "ecp", r: 4 * lwS }, side.g);
    var force = arrow(side.g, "impulse", 0, 0, 0, 1, 7 * lwS, 2 * lwS);
    var nameTop = text(el("g", { "class": "labels" }, top.g), 0, 0, D.body3_name, lwT, { "class": "body-label", "data-label": D.body3_name, "stroke-width": 3 * lwT });
    var nameW = (nameTop.getComputedTextLength && nameTop.getComputedTextLength()) || 6.5 * lwT * D.body3_name.length;
    var footPool = [];
    var fscale = D.force_scale > 0 ? 0.25 * side.size / D.force_scale : 0;
    function signedArea(p) {
      var a = 0;
      for (var i = 0; i < p.length; ++i) { var q = p[(i + 1) % p.length]; a += p[i][0] * q[1] - q[0] * p[i][1]; }
      return a;
    }
    // The prism seen along one axis: each cap and each side face, all turned the same way so
    // that the path's nonzero fill is their union (painted once, at one opacity).
    function prismPath(c0, c1) {
      var pieces = [c0, c1], n = c0.length;
      for (var i = 0; i < n; ++i) pieces.push([c0[i], c0[(i + 1) % n], c1[(i + 1) % n], c1[i]]);
      return pieces.map(function (p) { return pathOf(signedArea(p) < 0 ? p.slice().reverse() : p, true); }).join("");
    }
    draw = function (f) {
      var o = f * 7, x = P[o], y = P[o + 1], z = P[o + 2], w = P[o + 3], qx = P[o + 4], qy = P[o + 5], qz = P[o + 6];
      // Rotation matrix of the unit quaternion (w, x, y, z).
      var r00 = 1 - 2 * (qy * qy + qz * qz), r01 = 2 * (qx * qy - w * qz), r02 = 2 * (qx * qz + w * qy);
      var r10 = 2 * (qx * qy + w * qz), r11 = 1 - 2 * (qx * qx + qz * qz), r12 = 2 * (qy * qz - w * qx);
      var r20 = 2 * (qx * qz - w * qy), r21 = 2 * (qy * qz + w * qx), r22 = 1 - 2 * (qx * qx + qy * qy);
      function toWorld(v) {
        return [x + r00 * v[0] + r01 * v[1] + r02 * v[2], y + r10 * v[0] + r11 * v[1] + r12 * v[2], z + r20 * v[0] + r21 * v[1] + r22 * v[2]];
      }
      var xy = [], xz = [], low = Infinity, world = [];
      for (var i = 0; i < V.length; ++i) {
        var wv = toWorld(V[i]);
        world.push(wv); xy.push([wv[0], wv[1]]); xz.push([wv[0], wv[2]]);
        if (wv[2] < low) low = wv[2];
      }
      if (prism) {
        var caps = prism.map(function (c) { return c.map(toWorld); });
        world = caps[0].concat(caps[1]);  // every listed corner, for the footprint
        function along(a, b) { return function (c) { return c.map(function (q) { return [q[a], q[b]]; }); }; }
        var t = caps.map(along(0, 1)), sd = caps.map(along(0, 2));
        hullTop.setAttribute("d", prismPath(t[0], t[1]));
        hullSide.setAttribute("d", prismPath(sd[0], sd[1]));
        stepperTop.setAttribute("d", pathOf(hull2(xy), true));
        stepperSide.setAttribute("d", pathOf(hull2(xz), true));
      } else {
        hullTop.setAttribute("d", pathOf(hull2(xy), true));
        hullSide.setAttribute("d", pathOf(hull2(xz), true));
      }
      // The footprint: the points within 1 mm of the lowest, i.e. what rests on the plane.
      var n = 0;
      for (var k = 0; k < world.length; ++k) {
        if (world[k][2] > low + 1e-3) continue;
        while (footPool.length <= n) footPool.push(el("circle", { r: 2.5 * lwT }, feet));
        footPool[n].setAttribute("cx", world[k][0]); footPool[n].setAttribute("cy", world[k][1]);
        footPool[n].setAttribute("visibility", "visible");
        ++n;
      }
      for (var u = n; u < footPool.length; ++u) footPool[u].setAttribute("visibility", "hidden");
      // The name above the body from above, or below it when the view's top is too near.
      var bx0 = Infinity, bx1 = -Infinity, by0 = Infinity, by1 = -Infinity;
      for (var m = 0; m < world.length; ++m) {
        bx0 = Math.min(bx0, world[m][0]); bx1 = Math.max(bx1, world[m][0]);
        by0 = Math.min(by0, world[m][1]); by1 = Math.max(by1, world[m][1]);
      }
      var ly = by1 + 3 * lwT + 11 * lwT <= D.bounds_top[3] ? by1 + 3 * lwT : by0 - 14 * lwT;
      nameTop.setAttribute("x", 0.5 * (bx0 + bx1) - 0.5 * nameW);
      nameTop.setAttribute("y", -(ly + 2.4 * lwT));
      var e = f * 4, ex = ecp[e], ey = ecp[e + 1], ez = ecp[e + 2], pn = ecp[e + 3];
      var has = ecp.length > e && isFinite(ex) && isFinite(ey);
      ecpTop.setAttribute("visibility", has ? "visible" : "hidden");
      ecpSide.setAttribute("visibility", has ? "visible" : "hidden");
      if (has) {
        ecpTop.setAttribute("cx", ex); ecpTop.setAttribute("cy", ey);
        ecpSide.setAttribute("cx", ex); ecpSide.setAttribute("cy", ez);
        setArrow(force, ex, ez, 0, fscale * pn, 7 * lwS);
      } else {
        force.setAttribute("visibility", "hidden");
      }
      return has ? 1 : 0;
    };
    legend.innerHTML = "<div>dots: the points of the body within 1 mm of the plane (its footprint)</div>" +
      (prism ? "<div>dashed: the convex hull of the body's points, which the stepper uses for the non-convex body (Xie &amp; Chakraborty 2021, sec. 4)</div>" : "") +
      (D.has_ecp ? "<div><span style=\"color:#d35400\">&#9679;</span> the equivalent contact point (Xie &amp; Chakraborty 2021) and, from the side, its normal impulse over the step: " +
        "an arrow a quarter of the view high is " + (D.force_scale > 0 ? D.force_scale.toPrecision(3) : "0") + " N s</div>" : "");
  }

  // ---- controls (none for a single frame: a picture of the scene) ----
  var frame = 0, timer = null, slider = null, label = null, playBtn = null;
  function show(f) {
    frame = Math.max(0, Math.min(F - 1, f | 0));
    if (slider) slider.value = String(frame);
    draw(frame);
    if (label) label.textContent = "step " + frame + " / " + (F - 1) + "   t = " + fmt(timeOf(frame), 4) + " s";
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } if (playBtn) playBtn.textContent = "Play"; }
  function play() {
    if (frame >= F - 1) show(0);
    playBtn.textContent = "Pause";
    var stride = Math.max(1, Math.round(F / 600));  // a long replay plays in about 20 s
    timer = setInterval(function () {
      if (frame >= F - 1) { stop(); return; }
      show(frame + stride);
    }, 1000 / 30);
  }
  if (controls) {
    function button(text, title) {
      var b = document.createElement("button");
      b.textContent = text;
      b.title = title;
      controls.appendChild(b);
      return b;
    }
    playBtn = button("Play", "play / pause (space)");
    var back = button("\u25c0", "one step back (left arrow)"), fwd = button("\u25b6", "one step on (right arrow)");
    slider = document.createElement("input");
    slider.type = "range"; slider.min = "0"; slider.max = String(F - 1); slider.step = "1"; slider.value = "0";
    slider.className = "slider";
    slider.setAttribute("aria-label", "step");
    controls.appendChild(slider);
    label = document.createElement("span");
    label.className = "label";
    controls.appendChild(label);
    playBtn.addEventListener("click", function () { if (timer) stop(); else play(); });
    back.addEventListener("click", function () { stop(); show(frame - 1); });
    fwd.addEventListener("click", function () { stop(); show(frame + 1); });
    slider.addEventListener("input", function () { stop(); show(Number(slider.value)); });
    root.tabIndex = 0;  // keys act on the replay that has the focus
    root.addEventListener("keydown", function (e) {
      if (e.key === " ") { e.preventDefault(); if (timer) stop(); else play(); }
      else if (e.key === "ArrowLeft") { stop(); show(frame - 1); }
      else if (e.key === "ArrowRight") { stop(); show(frame + 1); }
    });
  }
  show(options.frame || 0);

  // The self-test of the test suite: moves the slider as a user would, reads the bodies'
  // transforms back from the DOM and times the drawing of frames.
  function selftest() {
    var report = { frames: F, world: D.world };
    function transforms() {
      var out = {};
      root.querySelectorAll("[data-body]").forEach(function (g) {
        out[g.getAttribute("data-body")] = g.getAttribute("transform") || g.getAttribute("d");
      });
      return out;
    }
    function moveSlider(v) {
      if (!slider) { show(v); return; }
      slider.value = String(v);
      slider.dispatchEvent(new Event("input"));
    }
    moveSlider(0);
    report.first = transforms();
    report.first_label = label ? label.textContent : "";
    moveSlider(F - 1);
    report.last = transforms();
    report.last_label = label ? label.textContent : "";
    var marks = 0;
    for (var f = 0; f < F; ++f) marks += draw(f);
    report.halfplanes = Array.prototype.map.call(root.querySelectorAll(".halfplane-group"),
                                                 function (g) { return g.getAttribute("transform"); });
    report.contact_marks = marks;
    function rectOf(r) { return ["x", "y", "width", "height"].map(function (a) { return Number(r.getAttribute(a)); }); }
    report.regions = Array.prototype.map.call(root.querySelectorAll(".region"), function (g) {
      var m = g.querySelector("rect.margin");
      return { kind: g.getAttribute("class").replace("region ", ""), body: g.getAttribute("data-region-body"),
               box: rectOf(g.querySelector("rect")), margin_box: m ? rectOf(m) : null };
    });
    // Draw order: is every body's group before (under) the goal region?
    var goal = root.querySelector(".region.goal");
    report.goal_over_bodies = goal ? Array.prototype.every.call(root.querySelectorAll(".body[data-body]"), function (b) {
      return (b.compareDocumentPosition(goal) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    }) : null;
    // Each drawn shape with its body's kind and its colours as the browser paints them.
    report.shapes = [];
    root.querySelectorAll(".body[data-body]").forEach(function (g) {
      var kind = ["fixed", "free", "linked"].filter(function (k) { return g.classList.contains(k); })[0];
      Array.prototype.forEach.call(g.tagName === "path" ? [g] : g.children, function (e) {
        if (e.classList.contains("origin")) return;
        var cs = getComputedStyle(e);
        report.shapes.push({ body: g.getAttribute("data-body"), kind: kind, element: e.tagName + (e.getAttribute("class") ? "." + e.getAttribute("class").split(" ")[0] : ""),
                             fill: cs.fill, stroke: cs.stroke });
      });
    });
    report.labels = Array.prototype.map.call(root.querySelectorAll("[data-label]"), function (t) { return t.textContent; });
    report.bodies_with_shapes = D.world === "body_on_plane" ? [D.body3_name]
      : D.bodies.filter(function (b) { return b.shapes.length > 0; }).map(function (b) { return b.name; });
    report.axis_arrows = root.querySelectorAll(".axis-x, .axis-y, .axis-z").length;
    report.axes_glyphs = Array.prototype.map.call(root.querySelectorAll(".axes-glyph"), function (g) {
      return Array.prototype.map.call(g.querySelectorAll("text"), function (t) { return t.textContent; }).join("");
    });
    // Over up to 60 frames: the gravity mark's box against every body's drawn box (the
    // half-planes, which fill the view below the ground, aside), and each label against its
    // own body's box.
    var gmark = root.querySelector(".gravity-mark"), bodiesDrawn = root.querySelectorAll(".body[data-body]");
    function hit(a, b) { return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; }
    report.gravity_overlaps = 0; report.label_overlaps = 0; report.frames_checked = 0;
    for (var cf = 0; cf < F; cf += Math.max(1, Math.floor(F / 60))) {
      draw(cf);
      ++report.frames_checked;
      var gr = gmark ? gmark.getBoundingClientRect() : null;
      bodiesDrawn.forEach(function (b) {
        var br = b.getBoundingClientRect();
        if (gr && hit(gr, br)) ++report.gravity_overlaps;
        var lab = root.querySelector('[data-label="' + b.getAttribute("data-body") + '"]');
        if (lab && hit(lab.getBoundingClientRect(), br)) ++report.label_overlaps;
      });
    }
    report.gravity_text = gmark ? gmark.textContent : "";
    var outline = root.querySelector("path.hull.body");
    if (outline) {
      draw(0);
      // The first closed figure of the outline from above (the prism's first cap, or the hull).
      report.outline_top = ((outline.getAttribute("d").split("Z")[0]).match(/-?[0-9.e+-]+/g) || []).map(Number);
      report.prism = !!(D.prism && D.prism.length);
    }
    var trailPath = root.querySelector(".trail");
    report.trail_points = trailPath ? (trailPath.getAttribute("d").match(/[ML]/g) || []).length : 0;
    report.penetration_marks = D.penetrations ? decode(D.penetrations.offsets, "i32")[F] || 0 : 0;
    var n = Math.min(F, 1000), t0 = performance.now();
    for (var k = 0; k < n; ++k) draw(Math.floor(k * (F - 1) / Math.max(1, n - 1)));
    report.ms_per_frame = (performance.now() - t0) / n;
    show(0);
    return report;
  }
  return { frames: F, show: show, draw: draw, selftest: selftest };
}
