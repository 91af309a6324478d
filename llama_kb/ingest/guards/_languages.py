"""The word for a credential in more languages and scripts.

Languages that inflect their nouns (``hasła``, ``пароля``, ``şifresi``) are matched by stem;
scripts written without spaces (``パスワードは``, ``密码``) and words of several parts
(``mot de passe``, ``kata sandi``) by phrase anywhere in the text.
"""

from __future__ import annotations

import re

__all__ = [
    "COMPOUND_STEMS",
    "CREDENTIAL_WORDS",
    "KEY_STEMS",
    "PASSWORD_STEMS",
    "PHRASES",
    "STEMS_PATTERN",
    "TOKEN_STEMS",
]

# Polish, Russian, Ukrainian, Czech, Slovak, Turkish, Hungarian, Finnish, Swedish, Danish,
# Norwegian, Dutch, Portuguese, Croatian, Serbian, Slovene, Greek, Romanian, Estonian,
# Lithuanian, Icelandic, Italian and Turkish (parola), Albanian, Catalan, Galician, Basque,
# Swahili, Georgian, Armenian.
PASSWORD_STEMS: tuple[str, ...] = (
    "парол", "гасло", "лозинк", "hasł", "haslo", "hasla", "heslo", "hesla", "şifre", "sifre",
    "jelsz", "salasan", "lösenord", "losenord", "adgangskode", "passord", "wachtwoord",
    "senha", "lozink", "geslo", "κωδικ", "συνθηματικ", "parolă", "parolei", "parola", "parool",
    "slaptažod", "slaptazod", "lykilorð", "fjalëkalim", "contrasenya", "contrasinal",
    "pasahitz", "nenosiri", "პაროლ", "գաղտնաբառ",
    # Azerbaijani, Welsh, Irish, Esperanto, Zulu, Haitian Creole
    "şifrə", "sifrə", "cyfrinair", "pasfhocal", "pasvort", "iphasiwedi", "modpas",
    # Latvian and Uzbek, Kyrgyz, Turkmen, Kurdish, Danish (a second word), Serbian, Croatian
    # and Bosnian, Igbo, Malagasy, Maori, Yoruba, Sesotho
    "parol", "сырсөз", "açarsöz", "şîfre", "kodeord", "šifr", "sifra", "okwuntughe",
    "tenimiafina", "kupuhipa", "ọrọigbaniwọle", "phasewete",
)  # fmt: skip
# Languages that compound nouns put the word for password last (``Initialkennwort``,
# ``adminwachtwoord``, ``pääkäyttäjänsalasana``): German, Dutch, Afrikaans, Luxembourgish,
# Swedish, Norwegian, Danish, Finnish, Hungarian, Estonian and Czech, Polish, Slovene.
COMPOUND_STEMS: tuple[str, ...] = (
    "passwort", "kennwort", "wachtwoord", "wagwoord", "passwuert", "lösenord", "losenord",
    "passord", "adgangskode", "salasana", "jelszó", "jelszo", "parool", "heslo", "hasło",
    "geslo", "kodeord",
)  # fmt: skip
# The word for "credentials" (login data) in Romance, Germanic and Slavic languages
CREDENTIAL_WORDS: tuple[str, ...] = (
    "credenziali", "credenciales", "credenciais", "credencials", "identifiants",
    "zugangsdaten", "logindaten", "anmeldedaten", "inloggegevens", "inloggningsuppgifter",
    "påloggingsinformasjon", "loginoplysninger", "tunnukset", "uwierzytelniające",
)  # fmt: skip
# The word for "key" (weak evidence, as ``key`` is) and for "token", by stem.
KEY_STEMS: tuple[str, ...] = (
    "schlüssel", "clé", "clef", "clave", "chiave", "chave", "sleutel", "klucz", "ключ",
    "anahtar", "nyckel", "nøgle", "nøkkel", "avain", "kulcs", "klíč", "kľúč", "κλειδ", "kunci",
)  # fmt: skip
TOKEN_STEMS: tuple[str, ...] = ("токен", "jeton", "gettone")
# The stems as a pattern for a word that starts with one (``şifreniz``).
STEMS_PATTERN = r"\b(?:" + "|".join(PASSWORD_STEMS) + r")\w*"
_CJK_PASSWORD = (
    "パスワード|暗証番号|密码|密碼|口令|비밀번호|비번|패스워드|암호|סיסמ|पासवर्ड|รหัสผ่าน|"
    # Persian, Urdu, Bengali, Tamil, Hindi (Devanagari word), Kazakh, Mongolian, Lao, Khmer,
    # Burmese, Sinhala and Amharic
    "رمز عبور|گذرواژه|کلمه عبور|پاس ورڈ|পাসওয়ার্ড|கடவுச்சொல்|कूटशब्द|құпия сөз|нууц үг|"
    "ລະຫັດຜ່ານ|ពាក្យសម្ងាត់|စကားဝှက်|මුරපදය|የይለፍ ቃል|"
    # Punjabi, Gujarati, Telugu, Kannada, Malayalam (with or without a zero-width non-joiner),
    # the Arabic "secret number" and the Hausa "secret word"
    "ਪਾਸਵਰਡ|પાસવર્ડ|పాస్\u200c?వర్డ్|ಪಾಸ್\u200c?ವರ್ಡ್|പാസ്\u200c?വേഡ്|الرقم السري|kalmar sirri|"
    # native words in Bengali, Telugu, Kannada, Malayalam, Hindi; Pashto, Yoruba, Irish, Somali
    "কূটশব্দ|సంకేతపదం|ಗುಪ್ತಪದ|രഹസ്യവാക്ക്|पारण शब्द|پټنوم|ọ̀rọ̀ aṣínà|focal faire|furaha sirta"
)
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\bmot[- ]de[- ]passe\b|\bpalavra[- ]passe\b|\bm[ậa]t\s+kh[ẩa]u\b|"
            r"\bkata\s+(?:sandi|laluan)\w*|"
            r"كلمة (?:المرور|السر)|" + _CJK_PASSWORD + "|"
            # an access code in Romance and Germanic languages
            r"\bcodice\s+di\s+accesso\b|\bc[oó]digo\s+de\s+acc?esso?\b|\bcode\s+d'acc[eè]s\b|"
            r"\bzugangscode\b|\btoegangscode\b|\baccess\s+code\b",
            re.IGNORECASE,
        ),
        "password",
    ),
    (re.compile(r"トークン|令牌|토큰"), "token"),
    (re.compile(r"秘密鍵|密钥|密鑰|シークレット|APIキー|API\s*키"), "key"),
)
