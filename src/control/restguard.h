/* restguard: what keeps browsers out of the REST API, as pure functions of
 * a request's headers and the listener's policy (rest.h's struct
 * rest_policy), called by the socket-free core (rest_api.c).
 *
 * A page in a browser can reach a loopback listener two ways, and both are
 * closed here:
 * - DNS rebinding: a name the attacker controls is made to resolve to the
 *   device, so the page's requests are same-origin to the browser and it
 *   reads the replies. They carry that name in Host: a Host that is not an
 *   IP address, localhost, this machine's name, the listener's own host or
 *   rest.advertised.host.name is refused.
 * - Cross-site requests: a page may send a "simple" request (a POST of
 *   text/plain, a form) anywhere; it cannot read the reply but the request
 *   acts. Such a request carries the page's Origin: one that is neither the
 *   listener's own (its scheme and the Host the request names) nor listed
 *   in access.control.allow.origin (Connect's CORS key) is refused. A body
 *   must be JSON (as Connect's resources consume only application/json),
 *   which a page cannot send without a preflight that this same rule
 *   answers.
 *
 * Any thread; no state. Error convention: util/err.h. */
#ifndef SKIFF_RESTGUARD_H
#define SKIFF_RESTGUARD_H

#include <stdbool.h>
#include <stddef.h>

struct rest_policy;

/* Whether a Host header value (NULL: none, as HTTP/1.0 may send) names
 * this listener. */
bool restguard_host_ok(const struct rest_policy *p, const char *host);

/* Whether a request with this Origin (NULL: none) and Host may act: none,
 * the listener's own, or a listed one. */
bool restguard_origin_ok(const struct rest_policy *p, const char *origin, const char *host);

/* Whether origin is listed in access.control.allow.origin (then the reply
 * carries Access-Control-Allow-Origin, as Jetty's CrossOriginFilter's). */
bool restguard_origin_listed(const struct rest_policy *p, const char *origin);

/* Whether method is in access.control.allow.methods (default GET, POST,
 * HEAD, as Connect's). */
bool restguard_method_listed(const struct rest_policy *p, const char *method);

/* Whether a Content-Type header value is JSON (application/json, any
 * parameters, any case). */
bool restguard_json(const char *content_type);

#endif
