// The associated data that binds an encrypted provider credential to where it is stored, so a
// ciphertext copied into another workspace, provider or field does not decrypt. JSON keeps the
// parts unambiguous whatever characters ids contain ("a:b","c" ≠ "a","b:c").
export function credentialAad(workspaceId: string, providerId: string, field: string): string {
  return JSON.stringify(['provider-credential', workspaceId, providerId, field]);
}
