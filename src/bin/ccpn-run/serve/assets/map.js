// ccpn live map: draws the net's zones (moving ones where they are now), each
// tracked object's latest position and trail, and detections as they come (a list
// and markers; clicking one shows its members and fields). Everything comes from
// the server that serves this page; tiles only with `--tiles`.
(function () {
  'use strict';
  const params = new URLSearchParams(location.search);
  const token = params.get('access_token');
  const withToken = (path) => {
    if (!token) return path;
    return path + (path.includes('?') ? '&' : '?') + 'access_token=' + encodeURIComponent(token);
  };
  const getJson = (path) => fetch(withToken(path)).then((r) => {
    if (!r.ok) throw new Error(path + ': ' + r.status);
    return r.json();
  });
  const MAX_LISTED = 200;
  const statusEl = document.getElementById('status');
  const listEl = document.getElementById('detections');
  const detailEl = document.getElementById('detail');
  const countsEl = document.getElementById('counts');
  let map, zonesLayer, objectsLayer, detectionsLayer, planar = true, fitted = false;
  let nextSeq = null, detections = 0;
  const objects = new Map();

  // A detection's location as a Leaflet point.
  const latLngOf = (d) => planar
    ? (d.x !== undefined ? L.latLng(d.y, d.x) : null)
    : (d.lon !== undefined ? L.latLng(d.lat, d.lon) : null);
  const fmtTime = (t) => typeof t === 'number' ? new Date(t * 1000).toISOString().replace('.000Z', 'Z') : String(t);

  function setStatus(text, cls) {
    statusEl.textContent = text;
    statusEl.className = 'status ' + (cls || '');
  }

  function start(config) {
    planar = config.space !== 'wgs84';
    document.getElementById('net').textContent = config.net + ' — outputs: ' + config.outputs.join(', ');
    map = L.map('map', planar ? { crs: L.CRS.Simple, minZoom: -12, maxZoom: 8, zoomSnap: 0.25 } : { zoomSnap: 0.25 });
    if (!planar && config.tiles) {
      L.tileLayer(config.tiles, { maxZoom: 19, attribution: 'tiles: your tile server' }).addTo(map);
    }
    map.setView([0, 0], planar ? -4 : 2);
    L.control.scale({ imperial: false }).addTo(map);
    zonesLayer = L.layerGroup().addTo(map);
    objectsLayer = L.layerGroup().addTo(map);
    detectionsLayer = L.layerGroup().addTo(map);
    refreshZones();
    refreshObjects();
    setInterval(refreshZones, 2000);
    setInterval(refreshObjects, 1000);
    setInterval(refreshCounts, 2000);
    connect();
  }

  function refreshZones() {
    getJson('/zones').then((fc) => {
      zonesLayer.clearLayers();
      const layer = L.geoJSON(fc, {
        style: (f) => ({
          color: f.properties.moving ? '#d97706' : '#2563eb',
          weight: f.properties.shape === 'line' ? 3 : 1.5,
          fillOpacity: 0.08,
          dashArray: f.properties.moving ? '4 4' : null,
        }),
        onEachFeature: (f, l) => l.bindTooltip(f.properties.name, { permanent: false }),
      }).addTo(zonesLayer);
      if (!fitted && fc.features.length) {
        const b = layer.getBounds();
        if (b.isValid()) { map.fitBounds(b.pad(0.1)); fitted = true; }
      }
    }).catch(() => {});
  }

  function refreshObjects() {
    getJson('/objects').then((o) => {
      const seen = new Set();
      for (const obj of o.objects) {
        seen.add(obj.object);
        const pts = obj.trail.map((p) => L.latLng(p[1], p[0]));
        if (!pts.length) continue;
        let drawn = objects.get(obj.object);
        if (!drawn) {
          drawn = {
            trail: L.polyline(pts, { color: '#475569', weight: 1, opacity: 0.6 }).addTo(objectsLayer),
            dot: L.circleMarker(pts[pts.length - 1], { radius: 4, color: '#0f172a', weight: 1, fillColor: '#38bdf8', fillOpacity: 1, className: 'ccpn-object' }).addTo(objectsLayer),
          };
          drawn.dot.bindTooltip('');
          objects.set(obj.object, drawn);
        }
        drawn.trail.setLatLngs(pts);
        drawn.dot.setLatLng(pts[pts.length - 1]);
        drawn.dot.setTooltipContent(o.key + ' ' + obj.object + ' (' + obj.type + ') ' + fmtTime(obj.time));
      }
      for (const [name, drawn] of objects) {
        if (!seen.has(name)) { objectsLayer.removeLayer(drawn.trail); objectsLayer.removeLayer(drawn.dot); objects.delete(name); }
      }
      if (!fitted && o.objects.length) {
        const b = L.latLngBounds(o.objects.flatMap((x) => x.trail.map((p) => L.latLng(p[1], p[0]))));
        if (b.isValid()) { map.fitBounds(b.pad(0.2)); fitted = true; }
      }
    }).catch(() => {});
  }

  function refreshCounts() {
    getJson('/stats').then((s) => {
      countsEl.textContent = s.processed + ' events processed, ' + s.detections + ' detections, ' +
        s.late + ' late, ' + s.rejected + ' rejected';
    }).catch(() => {});
  }

  function show(d, marker, li) {
    for (const el of listEl.querySelectorAll('li.selected')) el.classList.remove('selected');
    if (li) li.classList.add('selected');
    detailEl.hidden = false;
    detailEl.textContent = JSON.stringify(d, null, 1);
    if (marker) { map.panTo(marker.getLatLng()); marker.openPopup(); }
  }

  function addDetection(d) {
    detections += 1;
    const where = latLngOf(d);
    let marker = null;
    const li = document.createElement('li');
    li.dataset.seq = d.seq;
    li.innerHTML = '<span class="name"></span> <span class="when"></span><br><span class="ids"></span>';
    li.querySelector('.name').textContent = d.event + (d.phase ? ' (' + d.phase + ')' : '');
    li.querySelector('.when').textContent = '#' + d.seq + ' ' + fmtTime(d.time);
    li.querySelector('.ids').textContent = 'members: ' + (d.ids || []).join(', ');
    if (where) {
      const fields = Object.entries(d).filter(([k]) => !['event', 'ids', 'seq'].includes(k))
        .map(([k, v]) => '<tr><td>' + esc(k) + '</td><td>' + esc(JSON.stringify(v)) + '</td></tr>').join('');
      marker = L.circleMarker(where, { radius: 8, color: '#b00020', weight: 2, fillColor: '#ef4444', fillOpacity: 0.5, className: 'ccpn-detection' })
        .bindPopup('<b>' + esc(d.event) + '</b> #' + d.seq + '<br>members: ' + esc((d.ids || []).join(', ')) + '<table>' + fields + '</table>')
        .addTo(detectionsLayer);
      marker.on('click', () => show(d, null, li));
      const layers = detectionsLayer.getLayers();
      if (layers.length > MAX_LISTED) detectionsLayer.removeLayer(layers[0]);
    }
    li.addEventListener('click', () => show(d, marker, li));
    listEl.insertBefore(li, listEl.firstChild);
    while (listEl.children.length > MAX_LISTED) listEl.removeChild(listEl.lastChild);
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }

  // Server-Sent Events; after a `lagged` notice or a drop, reconnect from the next seq.
  function connect() {
    const url = nextSeq === null ? '/detections' : '/detections?since=' + nextSeq;
    const source = new EventSource(withToken(url));
    source.onopen = () => setStatus('live', 'live');
    source.addEventListener('detection', (e) => {
      const d = JSON.parse(e.data);
      nextSeq = d.seq + 1;
      addDetection(d);
    });
    source.addEventListener('lagged', (e) => {
      const n = JSON.parse(e.data);
      nextSeq = n.since;
      source.close();
      setStatus('catching up', '');
      setTimeout(connect, 200);
    });
    source.onerror = () => {
      setStatus('reconnecting', 'down');
      source.close();
      setTimeout(connect, 1000);
    };
  }

  getJson('/config').then(start).catch((e) => setStatus('error: ' + e.message, 'down'));
})();
