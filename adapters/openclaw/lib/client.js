// A small HTTP client for the metaclaw-plugin API: keep-alive, JSON, bearer token, hard timeouts.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

export class SidecarError extends Error {
  constructor(message, { status, code } = {}) {
    super(message);
    this.name = "SidecarError";
    this.status = status;
    this.code = code;
  }
}

export class SidecarClient {
  /**
   * @param {{url: string, tokenFile: string}} opts
   */
  constructor({ url, tokenFile }) {
    this.base = new URL(url.endsWith("/") ? url : url + "/");
    this.tokenFile = tokenFile;
    this.token = null;
    const mod = this.base.protocol === "https:" ? https : http;
    this.mod = mod;
    // Keep-alive saves a TCP handshake per hook call; few sockets are needed on loopback.
    this.agent = new mod.Agent({ keepAlive: true, maxSockets: 16, maxFreeSockets: 4, keepAliveMsecs: 10_000 });
  }

  readToken(force = false) {
    if (this.token && !force) return this.token;
    try {
      const t = fs.readFileSync(this.tokenFile, "utf8").trim();
      this.token = t || null;
    } catch (e) {
      this.token = null;
      throw new SidecarError(`cannot read the token file ${this.tokenFile}: ${e.code || e.message}`, { code: "NO_TOKEN" });
    }
    if (!this.token) throw new SidecarError(`the token file ${this.tokenFile} is empty`, { code: "NO_TOKEN" });
    return this.token;
  }

  /** One request; resolves to the parsed JSON body. Retries once on 401 with a re-read token. */
  async request(method, path, body, timeoutMs) {
    try {
      return await this._request(method, path, body, timeoutMs, false);
    } catch (e) {
      if (e instanceof SidecarError && e.status === 401) {
        return await this._request(method, path, body, timeoutMs, true);
      }
      throw e;
    }
  }

  _request(method, path, body, timeoutMs, refreshToken) {
    let token;
    try {
      token = this.readToken(refreshToken);
    } catch (e) {
      return Promise.reject(e);
    }
    const url = new URL(path.replace(/^\//, ""), this.base);
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (fn, v) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        fn(v);
      };
      const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
      if (payload) {
        headers["Content-Type"] = "application/json";
        headers["Content-Length"] = String(payload.length);
      }
      const req = this.mod.request(url, { method, headers, agent: this.agent }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("error", (e) => finish(reject, new SidecarError(`reading the answer failed: ${e.message}`, { code: e.code })));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let data = null;
          try {
            data = text ? JSON.parse(text) : null;
          } catch {
            data = null;
          }
          if (res.statusCode >= 200 && res.statusCode < 300) finish(resolve, data);
          else {
            const msg = (data && data.error) || text.slice(0, 300) || `HTTP ${res.statusCode}`;
            finish(reject, new SidecarError(`${method} ${url.pathname} -> ${res.statusCode}: ${msg}`, { status: res.statusCode }));
          }
        });
      });
      const timer = setTimeout(() => {
        finish(reject, new SidecarError(`${method} ${url.pathname} timed out after ${timeoutMs} ms`, { code: "TIMEOUT" }));
        req.destroy();
      }, timeoutMs);
      req.on("error", (e) =>
        finish(reject, new SidecarError(`${method} ${url.pathname} failed: ${e.code || e.message}`, { code: e.code || "ERROR" })),
      );
      req.setNoDelay?.(true);
      if (payload) req.end(payload);
      else req.end();
    });
  }

  post(path, body, timeoutMs) {
    return this.request("POST", path, body, timeoutMs);
  }

  get(path, timeoutMs) {
    return this.request("GET", path, undefined, timeoutMs);
  }

  close() {
    this.agent.destroy();
  }
}
