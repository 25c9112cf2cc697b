#!/usr/bin/env python3
"""Cross-checks StoreGate's offer signatures against Apple's own Python library
(app-store-server-library, `pip install app-store-server-library`).

  python3 Scripts/crosscheck_offers.py --storegate .build/debug/storegate

With one fresh P-256 key (written as a .p8 file, as App Store Connect issues it):
  * StoreKit 1 promotional offer: `storegate offers sign promotional-v1` signs; Apple's
    PromotionalOfferSignatureCreator is run on the same inputs (bundle id, key id, product,
    offer, application username, nonce, timestamp) with its signing call observed, so the exact
    bytes Apple's creator signs are known; StoreGate's DER signature must verify over exactly
    those bytes with the public key (ECDSA P-256, SHA-256), and Apple's signature must verify
    over them too. Mixed-case usernames and nonces check the lower-casing.
  * StoreKit 2 JWS (promotional offer V2 with and without transactionId, introductory offer
    eligibility allowed and not, Advanced Commerce in-app request): StoreGate's JWS must
    verify with PyJWT and the public key, as ES256 with the kind's audience, as Apple's code
    expects; Apple's JWSSignatureCreator subclasses sign the same inputs; both headers and
    both claim sets must be equal, member for member, except `iat` (each the signing second:
    both integers within 120 s of now) and `nonce` (each a fresh lower-case UUID, different).
    The Advanced Commerce request is Apple's own model (a reactivation request), whose JSON,
    as Apple's creator writes it, is what StoreGate is given to sign.

Exit status: 0 when everything agrees, 1 on any disagreement, 2 when the library or the
storegate binary is missing.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

from crosscheck_common import argument_parser, b64url_json, library_missing, storegate_binary

BUNDLE_ID = "com.example.storegate"
KEY_ID = "OFFERKEY01"
ISSUER_ID = "57246542-96fe-1a63-e053-0824d011072a"


def main():
    args = argument_parser(__doc__).parse_args()

    try:
        import jwt
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
        from appstoreserverlibrary import jws_signature_creator as creators
        from appstoreserverlibrary.models.AdvancedCommerceSubscriptionReactivateInAppRequest import AdvancedCommerceSubscriptionReactivateInAppRequest
        from appstoreserverlibrary.models.AdvancedCommerceRequestInfo import AdvancedCommerceRequestInfo
        from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    except ImportError as error:
        return library_missing(error)

    storegate = storegate_binary(args.storegate)
    if storegate is None:
        return 2

    private_key = ec.generate_private_key(ec.SECP256R1())
    public_key = private_key.public_key()
    pem = private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    scratch = tempfile.mkdtemp(prefix="storegate-offers-")
    key_file = os.path.join(scratch, "SubscriptionKey_OFFERKEY01.p8")
    with open(key_file, "wb") as handle:
        handle.write(pem)
    os.chmod(key_file, 0o600)

    problems = []
    checks = 0

    def problem(text):
        problems.append(text)
        print(f"DISAGREE  {text}")

    def agree(text):
        nonlocal checks
        checks += 1
        if args.verbose:
            print(f"agree     {text}")

    # The key reaches StoreGate through a file and flags that name no secret; its environment
    # carries no key of another kind, so the file is the one used.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("STOREGATE_")}

    def storegate_sign(*arguments, stdin=None):
        command = [storegate, "offers", "sign", *arguments, "--key-file", key_file, "--key-id", KEY_ID,
                   "--issuer-id", ISSUER_ID, "--bundle-id", BUNDLE_ID]
        result = subprocess.run(command, capture_output=True, text=True, input=stdin, env=environment)
        if result.returncode != 0:
            raise RuntimeError(f"storegate {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        if pem.decode() in result.stdout or pem.decode() in result.stderr:
            raise RuntimeError("storegate printed the private key")
        return json.loads(result.stdout)

    # --- StoreKit 1 ---------------------------------------------------------------------------
    class ObservedKey:
        """Apple's creator's signing key, recording what it is asked to sign."""

        def __init__(self, key):
            self.key = key
            self.signed = []

        def sign(self, data, algorithm):
            self.signed.append(bytes(data))
            return self.key.sign(data, algorithm)

    sk1_cases = [
        ("com.example.monthly", "WINBACK50", "", str(uuid.uuid4())),
        ("com.example.monthly", "WINBACK50", "7E3FB20B-4CDB-47CC-936D-99D65F608138", str(uuid.uuid4()).upper()),
        ("com.example.annual", "Loyalty_2026", "Account-Name-42", "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"),
    ]
    for product, offer, username, nonce in sk1_cases:
        timestamp = int(time.time() * 1000)
        label = f"SK1 {product}/{offer} username={username!r} nonce={nonce}"
        try:
            ours = storegate_sign("promotional-v1", "--product", product, "--offer", offer, "--application-username", username,
                                  "--nonce", nonce, "--timestamp", str(timestamp))
        except RuntimeError as error:
            problem(f"{label}: {error}")
            continue
        if ours.get("kind") != "promotional_offer_v1":
            problem(f"{label}: kind {ours.get('kind')!r}")
            continue
        signature = ours["signature"]
        creator = PromotionalOfferSignatureCreator(pem, KEY_ID, BUNDLE_ID)
        observed = ObservedKey(creator._signing_key)
        creator._signing_key = observed
        apple_signature = creator.create_signature(product, offer, username, uuid.UUID(nonce), timestamp)
        if len(observed.signed) != 1:
            problem(f"{label}: Apple's creator signed {len(observed.signed)} times")
            continue
        signed_bytes = observed.signed[0]
        for name, encoded in (("StoreGate's", signature["encodedSignature"]), ("Apple's", apple_signature)):
            try:
                public_key.verify(base64.b64decode(encoded, validate=True), signed_bytes, ec.ECDSA(hashes.SHA256()))
                agree(f"{label}: {name} signature verifies over the bytes Apple's creator signs")
            except (InvalidSignature, ValueError) as error:
                problem(f"{label}: {name} signature does not verify over Apple's bytes ({type(error).__name__})")
        expected_values = {"productId": product, "offerIdentifier": offer, "keyId": KEY_ID, "nonce": nonce.lower(),
                           "timestamp": timestamp, "applicationUsername": username.lower()}
        for member, value in expected_values.items():
            if signature.get(member) != value:
                problem(f"{label}: {member} is {signature.get(member)!r}, expected {value!r}")
        separator = "\u2063"
        rebuilt = separator.join([BUNDLE_ID, KEY_ID, product, offer, username.lower(), nonce.lower(), str(timestamp)]).encode()
        if rebuilt != signed_bytes:
            problem(f"{label}: Apple's creator signs {signed_bytes!r}, not the documented {rebuilt!r}")

    # --- StoreKit 2 ---------------------------------------------------------------------------
    reactivation = AdvancedCommerceSubscriptionReactivateInAppRequest(
        requestInfo=AdvancedCommerceRequestInfo(requestReferenceId=uuid.UUID("f55df048-4cd8-4261-b404-b6f813ea71a7")),
        transactionId="2000000000000001", storefront="USA")
    # The JSON Apple's creator base64-encodes into the `request` claim, byte for byte.
    reactivation_json = json.dumps(_get_cattrs_converter(type(reactivation)).unstructure(reactivation))
    request_file = os.path.join(scratch, "reactivation.json")
    with open(request_file, "w") as handle:
        handle.write(reactivation_json)

    jws_cases = [
        ("promotional-offer", ["promotional-v2", "--product", "com.example.monthly", "--offer", "WINBACK50"],
         lambda: creators.PromotionalOfferV2SignatureCreator(pem, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature("com.example.monthly", "WINBACK50", None)),
        ("promotional-offer", ["promotional-v2", "--product", "com.example.monthly", "--offer", "WINBACK50", "--transaction-id", "2000000000000001"],
         lambda: creators.PromotionalOfferV2SignatureCreator(pem, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature("com.example.monthly", "WINBACK50", "2000000000000001")),
        ("introductory-offer-eligibility", ["introductory", "--product", "com.example.monthly", "--transaction-id", "2000000000000001", "--allow", "true"],
         lambda: creators.IntroductoryOfferEligibilitySignatureCreator(pem, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature("com.example.monthly", True, "2000000000000001")),
        ("introductory-offer-eligibility", ["introductory", "--product", "com.example.monthly", "--transaction-id", "704000000000000001", "--allow", "false"],
         lambda: creators.IntroductoryOfferEligibilitySignatureCreator(pem, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature("com.example.monthly", False, "704000000000000001")),
        ("advanced-commerce-api", ["advanced-commerce", "--request-file", request_file],
         lambda: creators.AdvancedCommerceAPIInAppSignatureCreator(pem, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature(reactivation)),
    ]
    public_pem = public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    for audience, arguments, apple in jws_cases:
        label = f"JWS {arguments[0]} {' '.join(arguments[1:])}"
        try:
            ours = storegate_sign(*arguments)
        except RuntimeError as error:
            problem(f"{label}: {error}")
            continue
        token = ours.get("signature")
        if not isinstance(token, str):
            problem(f"{label}: no compact JWS in {ours!r}")
            continue
        try:
            ours_claims = jwt.decode(token, public_pem, algorithms=["ES256"], audience=audience, options={"require": ["iat", "aud", "iss"]})
            agree(f"{label}: StoreGate's JWS verifies as ES256 for {audience}")
        except jwt.PyJWTError as error:
            problem(f"{label}: StoreGate's JWS does not verify: {error}")
            continue
        apple_token = apple()
        apple_claims = jwt.decode(apple_token, public_pem, algorithms=["ES256"], audience=audience)
        ours_header, apple_header = jwt.get_unverified_header(token), jwt.get_unverified_header(apple_token)
        if ours_header != apple_header:
            problem(f"{label}: header {ours_header} differs from Apple's {apple_header}")
        else:
            agree(f"{label}: header {ours_header}")
        if set(ours_claims) != set(apple_claims):
            problem(f"{label}: claims {sorted(ours_claims)} differ from Apple's {sorted(apple_claims)}")
            continue
        now = time.time()
        for name in sorted(apple_claims):
            mine, theirs = ours_claims[name], apple_claims[name]
            if name == "iat":
                if not (type(mine) is int and type(theirs) is int and abs(mine - now) < 120 and abs(theirs - now) < 120):
                    problem(f"{label}: iat {mine!r} / Apple's {theirs!r}")
            elif name == "nonce":
                fresh = isinstance(mine, str) and mine == mine.lower() and str(uuid.UUID(mine)) == mine and mine != theirs
                if not fresh:
                    problem(f"{label}: nonce {mine!r} is not a fresh lower-case UUID")
            elif mine != theirs or type(mine) is not type(theirs):
                problem(f"{label}: claim {name} is {mine!r}, Apple's {theirs!r}")
        if audience == "advanced-commerce-api":
            decoded = base64.b64decode(ours_claims["request"]).decode()
            if decoded != reactivation_json:
                problem(f"{label}: the request claim holds {decoded!r}")
        agree(f"{label}: claims {sorted(ours_claims)}")

    print(f"offers cross-check: {checks} agreements, {len(problems)} disagreements "
          f"({len(sk1_cases)} StoreKit 1 signatures, {len(jws_cases)} StoreKit 2 JWS)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
